import { validateFulfillmentRequest, validateServiceFlowRequest } from './service-app.dto.js';

const flow = {
  Type: 'initiation',
  Message: '',
  ServiceCode: '711',
  Operator: 'mtn',
  ClientState: '',
  Mobile: '233241234567',
  SessionId: 's1',
};

describe('service-app request validation', () => {
  it('keeps the declared fields (Platform, for the channel), drops unknown ones, and accepts Type in any letter case', () => {
    for (const Type of [
      'initiation',
      'Response',
      'RESPONSE',
      'release',
      'Release',
      'timeout',
      'query',
      'Favorite',
    ]) {
      const result = validateServiceFlowRequest({
        ...flow,
        Type,
        Sequence: 1,
        Platform: 'USSD',
        Timeout: 30,
      });
      expect(result).toEqual({ ok: true, value: { ...flow, Type, Sequence: 1, Platform: 'USSD' } });
    }
  });

  it('accepts a request without the fields the module does not read (Operator, ClientState, Sequence)', () => {
    const { Operator: _o, ClientState: _c, ...rest } = flow;
    expect(validateServiceFlowRequest(rest).ok).toBe(true);
  });

  it('lists every problem with its field', () => {
    const result = validateServiceFlowRequest({ Type: '', Message: 3, SessionId: '', Mobile: null });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const fields = new Set(result.issues.map((i) => i.field));
    expect([...fields].sort()).toEqual(['Message', 'Mobile', 'ServiceCode', 'SessionId', 'Type']);
  });

  it('accepts any Type word (an unknown one is answered with a polite Release, as the platform SDK does)', () => {
    expect(validateServiceFlowRequest({ ...flow, Type: 'hello' }).ok).toBe(true);
    expect(validateServiceFlowRequest({ ...flow, Type: 'x'.repeat(65) }).ok).toBe(false);
  });

  it('refuses bodies that are not objects', () => {
    for (const body of [null, [], 'x', 3, undefined]) {
      expect(validateServiceFlowRequest(body).ok).toBe(false);
      expect(validateFulfillmentRequest(body).ok).toBe(false);
    }
  });

  it('validates the fulfillment request: OrderId and SessionId required, ExtraData an object, OrderInfo anything', () => {
    const orderInfo = { Status: 'Paid', Items: [{ Name: 'x' }], Payment: { AmountPaid: 5 } };
    expect(
      validateFulfillmentRequest({
        OrderId: 'o1',
        SessionId: 's1',
        ExtraData: {},
        OrderInfo: orderInfo,
        Extra: 1,
      }),
    ).toEqual({
      ok: true,
      value: { OrderId: 'o1', SessionId: 's1', ExtraData: {}, OrderInfo: orderInfo },
    });
    expect(validateFulfillmentRequest({ OrderId: 'o1', SessionId: 's1', OrderInfo: null }).ok).toBe(true);
    expect(validateFulfillmentRequest({ OrderId: 'o1', SessionId: 's1', ExtraData: [] }).ok).toBe(false);
    expect(validateFulfillmentRequest({ OrderId: 'o'.repeat(129), SessionId: 's1' }).ok).toBe(false);
    expect(validateFulfillmentRequest({ OrderId: { $ne: '' }, SessionId: 's1' }).ok).toBe(false);
  });

  it('never lets hostile keys through', () => {
    const body = JSON.parse('{"__proto__": {"polluted": true}, "OrderId": "o1", "SessionId": "s1"}');
    const result = validateFulfillmentRequest(body);
    expect(result).toEqual({ ok: true, value: { OrderId: 'o1', SessionId: 's1' } });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
