import { randomUUID } from 'node:crypto';
import { owned } from './sandbox.accounts.js';
import { apiErrorReply, type FieldError } from './sandbox.errors.js';
import { ghanaNetwork, isoNow, platformMsisdn, platformTime } from './sandbox.http.js';
import type { SandboxRouter } from './sandbox.router.js';
import type { SandboxState } from './sandbox.state.js';
import type { SandboxSmsMessage } from './sandbox.types.js';
import type { SandboxAccount } from './sandbox.option-types.js';
import type { SandboxReply, SandboxRequestContext } from './sandbox.route-types.js';

// The SMS API: each account sends from its own sender ids and sees its own records only (404 else).

interface Issue extends FieldError {
  subCode: number;
}

type SmsFields = Pick<
  SandboxSmsMessage,
  'kind' | 'batchId' | 'from' | 'to' | 'msisdn' | 'content' | 'clientReference'
>;

const issue = (field: string, message: string, subCode: number): Issue => ({ field, message, subCode });

export function registerSmsApi(router: SandboxRouter, state: SandboxState): void {
  const o = state.options.sms;
  const authorized = (ctx: SandboxRequestContext) =>
    state.accounts.authenticate(ctx.req.headers.authorization, 'sms');

  const unauthorized = () => apiErrorReply('sms', 401, { message: 'The request authorization failed.' });

  const validationError = (issues: Issue[]): SandboxReply =>
    apiErrorReply('sms', 400, {
      message: issues[0]!.message,
      subCode: issues[0]!.subCode,
      errors: issues.map(({ field, message }) => ({ field, message })),
    });

  const checkSender = (from: unknown, account: SandboxAccount, issues: Issue[]): void => {
    const problem =
      typeof from !== 'string' || from.trim() === ''
        ? 'From is required'
        : from.length > o.maxSenderLength
          ? `at most ${o.maxSenderLength} characters`
          : !state.accounts.maySendFrom(account, from)
            ? 'this sender id is not registered to these SMS keys'
            : undefined;
    if (problem) issues.push(issue('From', `Invalid source address: ${problem}`, 2));
  };

  const checkContent = (content: unknown, issues: Issue[]): void => {
    if (content === undefined || content === null || (typeof content === 'string' && content.trim() === ''))
      issues.push(issue('Content', 'The message content is empty', 6));
    else if (typeof content !== 'string') issues.push(issue('Content', 'Content must be a string', 8));
    else if (content.length > o.maxContentLength)
      issues.push(
        issue('Content', `The message body is too long (at most ${o.maxContentLength} characters)`, 3),
      );
  };

  const record = (account: SandboxAccount, fields: SmsFields, now = Date.now()): SandboxSmsMessage => {
    const message: SandboxSmsMessage = {
      messageId: randomUUID(),
      account: account.name,
      ...fields,
      rate: o.rate,
      networkId: ghanaNetwork(fields.msisdn).networkId,
      status: o.deliveryDelayMs === 0 ? 'Delivered' : 'Submitted',
      time: isoNow(now),
      updateTime: platformTime(now),
      deliverAt: now + o.deliveryDelayMs,
    };
    state.messages.push(message, [message.messageId]);
    state.emit('message', message);
    return message;
  };

  const singleSend = (account: SandboxAccount, b: Record<string, unknown>): SandboxReply => {
    const issues: Issue[] = [];
    checkSender(b.From, account, issues);
    const msisdn = platformMsisdn(b.To);
    if (!msisdn) issues.push(issue('To', 'Invalid destination address', 1));
    checkContent(b.Content, issues);
    const clientReference = b.ClientReference ?? null;
    if (clientReference !== null && typeof clientReference !== 'string')
      issues.push(issue('ClientReference', 'ClientReference must be a string', 8));
    if (issues.length > 0) return validationError(issues);
    const m = record(account, {
      kind: 'single',
      batchId: null,
      from: b.From as string,
      to: b.To as string,
      msisdn: msisdn!,
      content: b.Content as string,
      clientReference: clientReference as string | null,
    });
    return { status: 200, json: sentMessageBody(m) };
  };

  router.add('POST', '/v1/messages/batch/simple/send', 'sms', async (ctx) => {
    const account = authorized(ctx);
    if (!account) return unauthorized();
    const { From, Recipients, Content } = await ctx.jsonObject();
    const issues: Issue[] = [];
    checkSender(From, account, issues);
    const normalised: string[] = [];
    if (!Array.isArray(Recipients) || Recipients.length === 0)
      issues.push(issue('Recipients', 'Recipients must be a non-empty array of phone numbers', 8));
    else if (Recipients.length > o.maxRecipients)
      issues.push(issue('Recipients', `At most ${o.maxRecipients} recipients per batch`, 7));
    else
      Recipients.forEach((r, i) => {
        const msisdn = platformMsisdn(r);
        if (msisdn) normalised.push(msisdn);
        else if (issues.filter((x) => x.subCode === 1).length < 20)
          issues.push(issue(`Recipients[${i}]`, 'Invalid destination address', 1));
      });
    checkContent(Content, issues);
    if (issues.length > 0) return validationError(issues);

    const batchId = randomUUID();
    const now = Date.now();
    const data = (Recipients as string[]).map((to, i) => {
      const fields = { batchId, from: From as string, to, msisdn: normalised[i]! };
      const m = record(
        account,
        { ...fields, kind: 'batch', content: Content as string, clientReference: null },
        now,
      );
      return { recipient: to, content: m.content, messageId: m.messageId };
    });
    const evicted = state.batches.push(
      {
        batchId,
        account: account.name,
        from: From as string,
        content: Content as string,
        messageIds: data.map((d) => d.messageId),
        time: isoNow(now),
      },
      [batchId],
    );
    // Bounded by message ids kept, not only by count: large batches would keep millions of ids.
    state.batchIdsKept += data.length - (evicted?.messageIds.length ?? 0);
    while (state.batchIdsKept > state.options.recordLimit && state.batches.size > 1)
      state.batchIdsKept -= state.batches.shift()?.messageIds.length ?? 0;
    return { status: 200, json: { batchId, status: 0, data } };
  });

  router.add('POST', '/v1/messages/send', 'sms', async (ctx) => {
    const account = authorized(ctx);
    if (!account) return unauthorized();
    return singleSend(account, await ctx.jsonObject());
  });

  // The platform's GET variant authenticates with query parameters (or Basic auth).
  router.add('GET', '/v1/messages/send', 'sms', (ctx) => {
    const q = ctx.query;
    const id = q.get('clientid') ?? q.get('clientId');
    const secret = q.get('clientsecret') ?? q.get('clientSecret');
    const account =
      id !== null || secret !== null ? state.accounts.withPair(id, secret, 'sms') : authorized(ctx);
    if (!account) return unauthorized();
    const [From, To, Content, ClientReference] = ['from', 'to', 'content', 'clientreference'].map(
      (name) => q.get(name) ?? undefined,
    );
    return singleSend(account, { From, To, Content, ClientReference });
  });

  router.add('GET', '/v1/messages/batch/:batchId', 'sms', (ctx) => {
    const account = authorized(ctx);
    if (!account) return unauthorized();
    const batch = owned(state.batches.get(ctx.params.batchId!), account);
    if (!batch) return apiErrorReply('sms', 404, { message: 'The specified batch was not found.' });
    const data = batch.messageIds
      .map((id) => state.messages.get(id))
      .filter((m): m is SandboxSmsMessage => m !== undefined);
    const rate = Math.round(data.reduce((sum, m) => sum + m.rate, 0) * 10_000) / 10_000;
    return {
      status: 200,
      json: { batchId: batch.batchId, rate, data: data.map((m) => messageStatusBody(settleMessage(m))) },
    };
  });

  router.add('GET', '/v1/messages/:messageId', 'sms', (ctx) => {
    const account = authorized(ctx);
    if (!account) return unauthorized();
    const message = owned(state.messages.get(ctx.params.messageId!), account);
    if (!message) return apiErrorReply('sms', 404, { message: 'The specified message was not found.' });
    return { status: 200, json: messageStatusBody(settleMessage(message)) };
  });
}

/** Turns a `Submitted` message `Delivered` once its delivery delay passed. */
export function settleMessage(message: SandboxSmsMessage, now = Date.now()): SandboxSmsMessage {
  if (message.status === 'Submitted' && message.deliverAt <= now) {
    message.status = 'Delivered';
    message.updateTime = platformTime(message.deliverAt);
  }
  return message;
}

/** The answer to a single send, as the platform writes it. */
export function sentMessageBody(
  m: Pick<SandboxSmsMessage, 'rate' | 'messageId' | 'networkId' | 'clientReference'>,
): Record<string, unknown> {
  const { rate, messageId, networkId, clientReference } = m;
  const statusDescription = 'request submitted successfully';
  return { rate, messageId, status: 0, networkId, clientReference, statusDescription };
}

/** A message's status answer (`GET /v1/messages/{id}`, a batch's `data`), as the platform writes it. */
export function messageStatusBody(
  m: Omit<SandboxSmsMessage, 'account' | 'kind' | 'msisdn' | 'networkId' | 'clientReference' | 'deliverAt'>,
): Record<string, unknown> {
  return {
    rate: m.rate,
    batchId: m.batchId,
    messageId: m.messageId,
    content: m.content,
    status: m.status,
    updateTime: m.updateTime,
    time: m.time,
    to: m.to,
    from: m.from,
  };
}
