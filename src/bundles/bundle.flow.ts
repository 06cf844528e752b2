import { FlowContext, FlowStep, ServiceFlow } from 'nestjs-hubtel/service-app';

/**
 * The data bundles on sale (`Data` of the select prompt: Display, Value, Amount). Twelve: more than
 * one USSD screen holds, so a phone pages through them while the Hubtel app lists them all.
 */
export const DATA_BUNDLES = Object.freeze([
  { Display: '100MB - GHS 1.00', Value: 'DATA_100MB', Amount: 1 },
  { Display: '500MB - GHS 3.00', Value: 'DATA_500MB', Amount: 3 },
  { Display: '1GB - GHS 5.00', Value: 'DATA_1GB', Amount: 5 },
  { Display: '2GB - GHS 9.00', Value: 'DATA_2GB', Amount: 9 },
  { Display: '3GB - GHS 12.00', Value: 'DATA_3GB', Amount: 12 },
  { Display: '5GB - GHS 19.00', Value: 'DATA_5GB', Amount: 19 },
  { Display: '10GB - GHS 35.00', Value: 'DATA_10GB', Amount: 35 },
  { Display: '15GB - GHS 50.00', Value: 'DATA_15GB', Amount: 50 },
  { Display: '20GB - GHS 65.00', Value: 'DATA_20GB', Amount: 65 },
  { Display: '30GB - GHS 90.00', Value: 'DATA_30GB', Amount: 90 },
  { Display: '50GB - GHS 140.00', Value: 'DATA_50GB', Amount: 140 },
  { Display: '100GB - GHS 260.00', Value: 'DATA_100GB', Amount: 260 },
]);

export function findBundle(value: unknown) {
  return DATA_BUNDLES.find((b) => b.Value === value);
}

/** What the flow collects; the module keeps it in the session. */
interface BundleData extends Record<string, unknown> {
  destination: string;
  bundle: string;
}

/**
 * The contract's use case as a programmable service: the platform's client app asks for a phone
 * number (`input`, FieldType `phone`), offers the bundles (`select`), then puts the chosen bundle
 * in the cart (`AddToCart` with ServiceData {destination, amount, bundle}). Payment happens in
 * the client app; the paid order comes back as a fulfillment request (BundleFulfillment).
 *
 * The default flow: it serves every ServiceCode the platform sends to this app.
 */
@ServiceFlow()
export class DataBundleFlow {
  @FlowStep({ start: true })
  destination(ctx: FlowContext<BundleData>) {
    return ctx.input({
      message: 'Buy a data bundle. Enter the phone number that gets the data:',
      label: 'Phone number',
      fieldType: 'phone',
      name: 'destination',
    });
  }

  @FlowStep()
  bundle(ctx: FlowContext<BundleData>) {
    return ctx.select({
      message: `Choose a bundle for ${ctx.data.destination}:`,
      label: 'Data bundles',
      name: 'bundle',
      options: DATA_BUNDLES,
    });
  }

  @FlowStep()
  cart(ctx: FlowContext<BundleData>) {
    const option = ctx.selected()!;
    const destination = ctx.data.destination!;
    return ctx.addToCart({
      message: `You are buying ${option.Display} for ${destination}.`,
      label: 'Confirm purchase',
      item: {
        ItemName: `${option.Display.split(' - ')[0]} data bundle for ${destination}`,
        Qty: 1,
        Price: option.Amount,
        ServiceData: { destination, amount: option.Amount.toFixed(2), bundle: option.Value },
      },
    });
  }
}
