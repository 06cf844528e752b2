import { isTelcoOperator, isUssdRequest, serviceAppChannel } from './service-app.channel.js';

describe('the service-app channel rule', () => {
  it.each(['mtn', 'MTN', 'mtn-gh', 'Vodafone-GH', 'tigo', 'airtel', 'AirtelTigo', 'glo', 'safaricom-ke'])(
    'Operator %j is a telco: USSD',
    (Operator) => {
      expect(isTelcoOperator(Operator)).toBe(true);
      expect(isUssdRequest({ Operator })).toBe(true);
      expect(serviceAppChannel({ Operator })).toBe('ussd');
    },
  );

  it.each(['Hubtel-Android', 'hubtel-ios', 'webstore', 'mtn-android', 'mtnx', '', undefined, 42])(
    'Operator %j is an app channel',
    (Operator) => {
      expect(isUssdRequest({ Operator })).toBe(false);
      expect(serviceAppChannel({ Operator })).toBe('app');
    },
  );

  it('Platform USSD (any case) is USSD whatever the operator', () => {
    expect(isUssdRequest({ Platform: 'USSD', Operator: 'Hubtel-Android' })).toBe(true);
    expect(isUssdRequest({ Platform: 'ussd' })).toBe(true);
    expect(isUssdRequest({ Platform: 'Android', Operator: 'Hubtel-Android' })).toBe(false);
  });
});
