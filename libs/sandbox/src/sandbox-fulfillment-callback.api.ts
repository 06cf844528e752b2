import { apiErrorReply, type FieldError } from './sandbox.errors.js';
import { hexId, isoNow } from './sandbox-http.js';
import type { SandboxRouter } from './sandbox.router.js';
import type { SandboxState } from './sandbox.state.js';
import type { SandboxFulfillmentCallback } from './sandbox.types.js';

/* ------------------------------------------------------------------------------------------------
 * The platform's fulfillment-callback receiver: POST {callback_url}/callback
 *   {SessionId, OrderId, ServiceStatus, MetaData} → 200 {message: 'Callback received', responseCode: '0000', data: null}
 *   missing/invalid fields → 400 {message, responseCode: '4000', data: [{field, message}]}
 * The contract shows no authentication for it, so none is asked. A callback for an order the
 * sandbox's driver did not pay is still accepted and recorded, with `matched: false`.
 * ---------------------------------------------------------------------------------------------- */

export function registerFulfillmentCallbackApi(router: SandboxRouter, state: SandboxState): void {
  router.add('POST', '/callback', 'callback', async (ctx) => {
    const b = await ctx.jsonObject();
    const errors: FieldError[] = [];
    for (const field of ['SessionId', 'OrderId', 'ServiceStatus'] as const) {
      if (typeof b[field] !== 'string' || (b[field] as string).trim() === '')
        errors.push({ field, message: `${field} is required` });
    }
    if (errors.length > 0) return apiErrorReply('callback', 400, { message: 'Validation error', errors });

    const sessionId = b.SessionId as string;
    const orderId = b.OrderId as string;
    const serviceStatus = b.ServiceStatus as string;
    const session = state.sessions.get(sessionId);
    const matched = session?.order?.orderId === orderId;
    const record: SandboxFulfillmentCallback = {
      id: `fcb_${hexId().slice(0, 16)}`,
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
