import type { Response } from "express";
import type { operations } from "../../generated/api.js";

/** Every operationId of the contract. */
export type OperationId = keyof operations;

type Responses<O extends OperationId> = operations[O]["responses"];

/** The JSON body the contract declares for an operation's answer of one status. */
export type JsonResponse<O extends OperationId, S extends keyof Responses<O>> = Responses<O>[S] extends {
  content: { "application/json": infer B };
}
  ? B
  : never;

/** The JSON request body the contract declares for an operation. */
export type JsonRequest<O extends OperationId> =
  NonNullable<operations[O]["requestBody"]> extends { content: { "application/json": infer B } } ? B : never;

/** The query parameters the contract declares for an operation. */
export type QueryOf<O extends OperationId> = operations[O]["parameters"] extends { query?: infer Q }
  ? NonNullable<Q>
  : never;

/**
 * Writes a JSON answer typed by the contract: `send(res, "getProfile", 200, {data: ...})` does not
 * compile when the body drifts from openapi.yaml.
 */
export function send<O extends OperationId, S extends keyof Responses<O> & number>(
  res: Response,
  _operation: O,
  status: S,
  body: JsonResponse<O, S>,
): void {
  res.status(status).json(body);
}
