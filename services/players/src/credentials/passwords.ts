import argon2 from 'argon2';
import { randomBytes } from 'node:crypto';

/** argon2id hashing with the configured cost; `verifyAgainstNothing` equalises login timing. */
export class PasswordHasher {
  private dummy: Promise<string> | undefined;

  constructor(private readonly cost: { memoryKib: number; timeCost: number }) {}

  hash(password: string): Promise<string> {
    return argon2.hash(password, {
      type: argon2.argon2id,
      memoryCost: this.cost.memoryKib,
      timeCost: this.cost.timeCost,
      parallelism: 1,
    });
  }

  /** False for a wrong password or an unreadable hash. */
  async verify(hash: string, password: string): Promise<boolean> {
    return argon2.verify(hash, password).catch(() => false);
  }

  /** Spends the time of one verification, so an unknown email answers as slowly as a wrong password. */
  async verifyAgainstNothing(password: string): Promise<void> {
    this.dummy ??= this.hash(randomBytes(16).toString('hex'));
    await this.verify(await this.dummy, password);
  }
}
