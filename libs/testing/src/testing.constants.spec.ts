import { CHECKOUT_DEFAULT_CALLBACK_PATH } from 'nestjs-hubtel/checkout';
import { SERVICE_APP_ROUTES } from 'nestjs-hubtel/service-app';
import { TESTING_PATHS } from './testing.constants.js';

it("the testing kit's default paths are the modules' default routes", () => {
  const { prefix, serviceFlow, fulfillment } = SERVICE_APP_ROUTES;
  expect(TESTING_PATHS).toEqual({
    checkoutCallback: `/${CHECKOUT_DEFAULT_CALLBACK_PATH}`,
    serviceFlow: `/${prefix}/${serviceFlow}`,
    fulfillment: `/${prefix}/${fulfillment}`,
    fulfillmentCallback: '/callback',
  });
});
