// Password hashing behind a small interface, so tests can use cheaper parameters.
import { hash, verify } from '@node-rs/argon2';

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hashed: string, password: string): Promise<boolean>;
}

export interface Argon2Params {
  memoryCost: number;
  timeCost: number;
}

/** OWASP's argon2id baseline (19 MiB, 2 passes). */
export const PRODUCTION_ARGON2: Argon2Params = { memoryCost: 19456, timeCost: 2 };

export function argon2Hasher(params: Argon2Params = PRODUCTION_ARGON2): PasswordHasher {
  return {
    hash: (password) =>
      hash(password, { memoryCost: params.memoryCost, timeCost: params.timeCost }),
    async verify(hashed, password) {
      try {
        return await verify(hashed, password);
      } catch {
        return false;
      }
    },
  };
}
