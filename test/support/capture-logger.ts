import type { LoggerService } from '@nestjs/common';

export interface CapturedLine {
  level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  message: string;
  context?: string;
}

/** A Nest LoggerService that keeps every line, for asserting on what was (not) logged. */
export class CaptureLogger implements LoggerService {
  readonly lines: CapturedLine[] = [];

  private push(level: CapturedLine['level'], message: unknown, params: unknown[]): void {
    const context =
      typeof params[params.length - 1] === 'string' ? (params[params.length - 1] as string) : undefined;
    const text =
      typeof message === 'string'
        ? message
        : message instanceof Error
          ? `${message.message}\n${message.stack}`
          : JSON.stringify(message);
    const extra = params
      .slice(0, context === undefined ? params.length : -1)
      .map((p) => (typeof p === 'string' ? p : JSON.stringify(p)));
    this.lines.push({ level, message: [text, ...extra].join(' '), context });
  }

  log(message: unknown, ...params: unknown[]) {
    this.push('log', message, params);
  }
  error(message: unknown, ...params: unknown[]) {
    this.push('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]) {
    this.push('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]) {
    this.push('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]) {
    this.push('verbose', message, params);
  }
  fatal(message: unknown, ...params: unknown[]) {
    this.push('fatal', message, params);
  }

  /** Everything logged, one line per entry. */
  text(): string {
    return this.lines.map((l) => `[${l.level}] ${l.context ?? ''} ${l.message}`).join('\n');
  }

  clear(): void {
    this.lines.length = 0;
  }
}
