import {
  combineOutcomes,
  deferFulfillment,
  failFulfillment,
  fulfilled,
  fulfillmentEventFor,
  ServiceAppEvents,
} from './service-app.events.js';

describe('fulfillment outcomes', () => {
  it('reports success with the first answer as MetaData (null when none)', () => {
    expect(combineOutcomes(undefined)).toEqual({ kind: 'report', status: 'success', metaData: null });
    expect(combineOutcomes({})).toEqual({ kind: 'report', status: 'success', metaData: null });
    expect(combineOutcomes({ '1': { b: 2 }, '0': { a: 1 } })).toEqual({
      kind: 'report',
      status: 'success',
      metaData: { a: 1 },
    });
    expect(combineOutcomes({ '0': fulfilled({ serial: 'x' }) })).toEqual({
      kind: 'report',
      status: 'success',
      metaData: { serial: 'x' },
    });
    expect(combineOutcomes({ '0': 'text' })).toEqual({ kind: 'report', status: 'success', metaData: 'text' });
  });

  it('lets a failure win over everything, and a deferral over success', () => {
    expect(
      combineOutcomes({ '0': { a: 1 }, '1': deferFulfillment(), '2': failFulfillment({ why: 'stock' }) }),
    ).toEqual({
      kind: 'report',
      status: 'failed',
      metaData: { why: 'stock' },
    });
    expect(combineOutcomes({ '0': { a: 1 }, '1': deferFulfillment() })).toEqual({ kind: 'deferred' });
    expect(combineOutcomes({ '0': failFulfillment() })).toEqual({
      kind: 'report',
      status: 'failed',
      metaData: null,
    });
  });

  it('keeps the markers JSON (they are stored with the job record)', () => {
    for (const marker of [deferFulfillment(), failFulfillment({ a: 1 }), fulfilled(3)]) {
      expect(combineOutcomes({ '0': JSON.parse(JSON.stringify(marker)) })).toEqual(
        combineOutcomes({ '0': marker }),
      );
    }
  });

  it('names the per-ServiceCode event after the catch-all one', () => {
    expect(fulfillmentEventFor('711')).toBe(`${ServiceAppEvents.Fulfillment}:711`);
  });
});
