/** Resumable flows: an unfinished session's state waits for the next dial, asked whether to continue. */
import { deleteIfVersion } from '#internal';
import { type HubtelStore, type HubtelLogger } from 'nestjs-hubtel';
import { cartKey } from '../service-app.constants.js';
import type { ServiceFlowDefinition } from '../service-flow.context.js';
import type { ServiceFlowRegistry } from './service-flow.registry.js';
import { stepOf } from './service-flow.runner.js';
import {
  readResume,
  resumeKey,
  resumeRecord,
  type ResumeRecord,
  type SessionRecord,
} from './service-flow.session.js';

/** Step name of the resume question (no flow step can be named so: `@` marks the module's own). */
export const RESUME_STEP = '@resume';

export class FlowResume {
  constructor(
    private readonly store: HubtelStore,
    private readonly registry: ServiceFlowRegistry,
    private readonly logger: HubtelLogger,
    /** Only behind a path secret or allow-list: else anyone sending a Mobile sees what was typed. */
    readonly guarded: boolean,
  ) {}

  /** At start-up (and when a named account is built): resume is off behind an open endpoint; said once. */
  warnUnguarded(account: string, named: string | undefined): void {
    const flows = this.registry.list().flatMap((flow) => (flow.resume ? [flow.name] : []));
    if (this.guarded || flows.length === 0) return;
    const path = named === undefined ? 'serviceApp' : `serviceApp[${named}]`;
    this.logger.warn(
      `Flows ${flows.join(', ')} are resumable, but the service-flow endpoint of account "${account}" has neither a path secret nor an IP allow-list (${path}.access): resume is off there, since anyone sending a customer's Mobile would see what they typed`,
    );
  }

  /**
   * The unfinished session to offer at this start: this flow's, within the window, at a step the flow
   * still has, without a cart. Deleted at the version read: of two starts at once, one only gets it.
   */
  async offer(
    flow: ServiceFlowDefinition,
    session: Pick<SessionRecord, 'serviceCode' | 'mobile' | 'account'>,
    sessionId: string,
  ): Promise<ResumeRecord | undefined> {
    const key = resumeKey(session);
    const entry = await this.store.get<unknown>(key);
    const left = entry && readResume(entry.value);
    if (
      !left ||
      left.flow !== flow.name ||
      left.sessionId === sessionId ||
      Date.now() - left.at > flow.resume!.withinMs ||
      !stepOf(flow, left.screen.step) ||
      (await this.store.get(cartKey(left.sessionId)))
    )
      return undefined;
    return (await deleteIfVersion(this.store, key, entry.version)) ? left : undefined;
  }

  /** At `release` or `timeout`: a session that had an answer leaves its state, the window starting now. */
  async keep(sessionId: string, session: SessionRecord | undefined): Promise<void> {
    const flow = session && this.registry.get(session.flow);
    if (!session || !flow) return;
    // Gone before answering the question: the session it offered is left for the next dial again.
    if (session.screen.step === RESUME_STEP) {
      if (session.resume) await this.write(flow, sessionId, session, session.resume);
    } else if (Object.keys(session.data).length > 0) await this.write(flow, sessionId, session);
  }

  /** A resumable flow's answered state (or the record `left` offered), kept for the next dial. */
  async write(
    flow: ServiceFlowDefinition,
    sessionId: string,
    session: SessionRecord,
    left?: ResumeRecord,
  ): Promise<void> {
    if (!this.guarded || !flow.resume) return;
    const record = left ?? resumeRecord(sessionId, session, Date.now());
    await this.store.set(resumeKey(session), record, { ttlMs: flow.resume.withinMs });
  }

  /** A finished session (carted or ended) is never offered: its record goes. */
  async drop(flow: ServiceFlowDefinition, session: SessionRecord): Promise<void> {
    if (flow.resume) await this.store.delete(resumeKey(session));
  }
}
