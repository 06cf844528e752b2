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
