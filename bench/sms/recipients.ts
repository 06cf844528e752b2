/** Distinct Ghanaian MSISDNs (digits, country code, no plus), as the contract's samples write them. */
export function msisdn(index: number): string {
  return `2332${String(index).padStart(8, '0')}`;
}

export function recipientArray(count: number): string[] {
  const list = new Array<string>(count);
  for (let i = 0; i < count; i++) list[i] = msisdn(i);
  return list;
}

/** Recipients produced lazily, as a user streaming them from a database cursor would. */
export async function* recipientStream(count: number): AsyncGenerator<string> {
  for (let i = 0; i < count; i++) yield msisdn(i);
}
