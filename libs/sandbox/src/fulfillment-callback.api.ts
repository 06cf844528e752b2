import { apiErrorReply, type FieldError } from './sandbox.errors.js';
import { hexId, isoNow } from './sandbox.http.js';
import type { SandboxRouter } from './sandbox.router.js';
import type { SandboxState } from './sandbox.state.js';
import type { SandboxFulfillmentCallback } from './sandbox.types.js';
import type { SandboxReply } from './sandbox.route-types.js';

// The platform's fulfillment-callback receiver (`POST /callback`). The contract shows no auth, so none is
// asked unless an account has callback credentials. A callback for an order the driver did not pay is
// still recorded, with `matched: false`.

export function registerFulfillmentCallbackApi(router: SandboxRouter, state: SandboxState): void {
  router.add('POST', '/callback', 'callback', async (ctx) => {
    const b = await ctx.jsonObject();
    const errors: FieldError[] = [];
    for (const field of ['SessionId', 'OrderId', 'ServiceStatus'] as const)
      if (typeof b[field] !== 'string' || (b[field] as string).trim() === '')
        errors.push({ field, message: `${field} is required` });
    if (errors.length > 0) return apiErrorReply('callback', 400, { message: 'Validation error', errors });

    const sessionId = b.SessionId as string;
    const orderId = b.OrderId as string;
    const serviceStatus = b.ServiceStatus as string;
    const session = state.sessions.get(sessionId);
    const refused = checkCallbackAuth(state, ctx.req.headers.authorization, session?.account);
    if (refused) return refused;
    const matched = session?.order?.orderId === orderId;
    const record: SandboxFulfillmentCallback = {
      id: `fcb_${hexId().slice(0, 16)}`,
      account: session?.account ?? null,
      sessionId,
      orderId,
      serviceStatus,
      metaData: b.MetaData ?? null,
      body: b,
      matched,
      receivedAt: isoNow(),
    };
    if (matched && session?.order) {
      const success = serviceStatus.toLowerCase() === 'success';
      session.order.serviceStatus = serviceStatus;
      session.order.isFulfilled = success;
      session.state = success ? 'fulfilled' : 'fulfillment-failed';
      session.updatedAt = record.receivedAt;
      state.emit('session', session);
    }
    state.fulfillmentCallbacks.push(record, [record.id]);
    state.emit('fulfillment-callback', record);
    return { status: 200, json: { message: 'Callback received', responseCode: '0000', data: null } };
  });
}

/** The refusal of a callback whose credentials are not its session's account's; undefined when it may pass. */
function checkCallbackAuth(
  state: SandboxState,
  header: string | undefined,
  account: string | undefined,
): SandboxReply | undefined {
  if (!state.accounts.callbackAuth) return undefined;
  const given = state.accounts.authenticate(header, 'callback');
  const owner = account === undefined ? undefined : state.accounts.get(account);
  const unauthorized = () =>
    apiErrorReply('callback', 401, { responseCode: '0001', message: 'API not available' });
  // A pair that names no account is refused even where none is needed: a typo shows at once.
  if (header !== undefined && !given) return unauthorized();
  if (given && owner && given !== owner)
    return apiErrorReply('callback', 403, {
      responseCode: '4105',
      message: 'These credentials do not own the programmable service of this session',
    });
  if (owner?.credentials.callback && !given) return unauthorized();
  return undefined;
}
