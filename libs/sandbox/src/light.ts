/** `#light/sandbox`: the sandbox's HTTP helpers `hubtel-trigger` uses, without Nest (see core's light.ts). */
export { ghanaNetwork, hexId, paymentDescription, requestOnce, round2 } from './sandbox.http.js';
export { serverOrigin } from './sandbox.listener.js';
