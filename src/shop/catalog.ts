/** What the example shop sells. Names avoid `& * ! % @`: the mobile-money processor refuses payments whose description holds them. */
export interface Product {
  id: string;
  name: string;
  blurb: string;
  /** GHS, at most 2 decimals. */
  price: number;
  /** A colour for the product's tile (no images: the pages load nothing external). */
  colour: string;
}

export const CATALOG: readonly Product[] = Object.freeze([
  {
    id: 'kente-mug',
    name: 'Kente mug',
    blurb: 'Stoneware mug with a hand-painted kente band.',
    price: 25,
    colour: '#d99a1c',
  },
  {
    id: 'adinkra-tote',
    name: 'Adinkra tote bag',
    blurb: 'Cotton tote printed with the Gye Nyame symbol.',
    price: 60,
    colour: '#1f6f5c',
  },
  {
    id: 'shea-soap',
    name: 'Shea butter soap',
    blurb: 'Three bars of raw shea butter soap from Tamale.',
    price: 12.5,
    colour: '#8a5a3c',
  },
]);

export function findProduct(id: unknown): Product | undefined {
  return typeof id === 'string' ? CATALOG.find((p) => p.id === id) : undefined;
}

export function formatGhs(amount: number): string {
  return `GHS ${amount.toFixed(2)}`;
}
