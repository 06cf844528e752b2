import { STATUS_CODES } from 'node:http';
import { HttpException } from '@nestjs/common';
import type { ValidationIssue } from '../errors/hubtel.errors.js';

/** The body of every inbound error answer: branch on `code`; `issues` lists each bad field. */
export interface InboundErrorBody {
  statusCode: number;
  error: string;
  code: string;
  message: string;
  issues?: ValidationIssue[];
}

/** An HttpException whose response is an InboundErrorBody; works on Express and Fastify alike. */
export function inboundHttpError(
  status: number,
  code: string,
  message: string,
  issues?: ValidationIssue[],
): HttpException {
  const error = STATUS_CODES[status] ?? 'Error';
  const body: InboundErrorBody = { statusCode: status, error, code, message };
  if (issues) body.issues = issues.map(({ field, message: text }) => ({ field, message: text }));
  return new HttpException(body, status);
}

/** 400 for a body that failed DTO validation, listing every bad field. */
export function invalidBodyError(issues: ValidationIssue[], what = 'request body'): HttpException {
  const summary = issues
    .slice(0, 5)
    .map((issue) => issue.message)
    .join('; ');
  const more = issues.length > 5 ? ` (and ${issues.length - 5} more)` : '';
  return inboundHttpError(400, 'HUBTEL_INVALID_BODY', `Invalid ${what}: ${summary}${more}`, issues);
}

/** 503 for a request the store could not record: not acknowledged, so the platform sends it again. */
export function unrecordedError(what: string): HttpException {
  return inboundHttpError(
    503,
    'HUBTEL_UNAVAILABLE',
    `The ${what} could not be recorded; send it again later`,
  );
}
