import argon2 from 'argon2';
import { randomBytes } from 'node:crypto';
import { AppError } from '@ccs/shared';
import { BoundedQueue, type QueueLimits } from './bounded-queue.js';

/** The argon2id operations, reachable only inside a slot (PasswordHasher.withSlot). */
export interface PasswordChecks {
  hash(password: string): Promise<string>;
  /** False for a wrong password or an unreadable hash. */
  verify(hash: string, password: string): Promise<boolean>;
  /** Spends the time of one verification, so an unknown email answers as slowly as a wrong password. */
  verifyAgainstNothing(password: string): Promise<void>;
}

const overloaded = (retryAfterSeconds: number) =>
  AppError.overloaded('Too many password checks are waiting; nothing was done. Retry after the number of seconds in Retry-After.', retryAfterSeconds);

/**
 * argon2id hashing and verification with the configured cost, behind a bounded queue: at most
 * ARGON2_CONCURRENCY run at once (each holds a thread of libuv's pool and about
 * ARGON2_MEMORY_KIB of memory), at most ARGON2_QUEUE_DEPTH wait, none longer than
 * ARGON2_QUEUE_WAIT_MS. Past that a caller gets 503 `overloaded` with a retry hint before
 * anything was done, instead of waiting for a gateway timeout while its work goes on.
 */
export class PasswordHasher {
  private dummy: Promise<string> | undefined;
  private readonly queue: BoundedQueue;
  private readonly checks: PasswordChecks;

  constructor(
    private readonly cost: { memoryKib: number; timeCost: number },
    limits: QueueLimits,
  ) {
    this.queue = new BoundedQueue(limits, overloaded);
    this.checks = {
      hash: (password) => this.hash(password),
      verify: (hash, password) => argon2.verify(hash, password).catch(() => false),
      verifyAgainstNothing: async (password) => {
        this.dummy ??= this.hash(randomBytes(16).toString('hex'));
        await this.checks.verify(await this.dummy, password);
      },
    };
  }

  /**
   * Runs `work` (the lookups of one credential check and the argon2 calls it makes through its
   * argument) in a slot, or throws 503 `overloaded` without starting it. Keep writes and waits
   * (transactions, grant notices) outside: a slot is the scarce thing.
   */
  withSlot<T>(work: (checks: PasswordChecks) => Promise<T>): Promise<T> {
    return this.queue.run(() => work(this.checks));
  }

  /** Running and waiting checks now. */
  get load(): { running: number; waiting: number } {
    return this.queue.load;
  }

  private hash(password: string): Promise<string> {
    return argon2.hash(password, {
      type: argon2.argon2id,
      memoryCost: this.cost.memoryKib,
      timeCost: this.cost.timeCost,
      parallelism: 1,
    });
  }
}
