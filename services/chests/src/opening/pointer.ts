import { AppError } from '@ccs/shared';

/** Runs a check of the chest at `index` of the request, pointing an error it throws at that chest. */
export type Pointer = <T>(index: number, check: () => Promise<T>) => Promise<T>;

/** An error of the chest at `index` of a batch, pointing at it in the request document. */
export function pointedAt(index: number, err: AppError): AppError {
  return AppError.many(err.errors.map((e) => ({ ...e, source: { pointer: `/data/${index}/id` } })));
}

/** A batch's pointer: errors name the chest by its place in the document (`/data/<i>/id`). */
export const pointInBatch: Pointer = async (index, check) => {
  try {
    return await check();
  } catch (err) {
    throw err instanceof AppError ? pointedAt(index, err) : err;
  }
};

/** A single open's pointer: its one chest is the path's `{id}`, errors stay as they are. */
export const pointInPath: Pointer = (_index, check) => check();
