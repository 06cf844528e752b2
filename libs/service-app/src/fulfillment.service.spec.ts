import { orderedCart } from './fulfillment.cart.js';
import type { StoredCart } from './service-flow.types.js';

describe('orderedCart', () => {
  it('copies every StoredCart field and sets orderId, like a spread would (a new field cannot be forgotten)', () => {
    const cart: Required<StoredCart> = {
      sessionId: 's-1',
      flow: 'BundleFlow',
      serviceCode: '711',
      mobile: '233241234567',
      item: { ItemName: 'Airtime', Qty: 1, Price: 5, ServiceData: { amount: '5.00' } },
      data: { amount: 5 },
      createdAt: '2026-01-01T00:00:00.000Z',
      // Last, as the session writes it (the optional field after the others).
      operator: 'mtn',
      orderId: 'old',
    };
    const ordered = orderedCart(cart, 'order-1');
    expect(ordered).toStrictEqual({ ...cart, orderId: 'order-1' });
    expect(Object.keys(ordered)).toEqual(Object.keys(cart));
    expect(ordered.item).toBe(cart.item); // shared, not copied
    expect(cart.orderId).toBe('old'); // the stored cart is not changed

    const { operator: _operator, orderId: _orderId, ...plain } = cart;
    expect(orderedCart(plain, 'order-2')).toStrictEqual({ ...plain, orderId: 'order-2' });
    expect('operator' in orderedCart(plain, 'order-2')).toBe(false);
  });
});
