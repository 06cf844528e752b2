/** `#light/sandbox`: the sandbox's HTTP helpers and the commands' argument parsing, without Nest (see core's light.ts). */
export * from './cli/cli.args.js';
export { ghanaNetwork, hexId, jsonOrText, paymentDescription, requestOnce, round2 } from './sandbox.http.js';
export { serverOrigin } from './sandbox.listener.js';
