// Secrets and identifiers from the operating system's CSPRNG.
import { randomBytes, randomInt } from 'node:crypto';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export interface Random {
  /** Random alphanumeric string (API keys, bot tokens, passwords). */
  alphanumeric(length: number): string;
  /** Random URL-safe id (queue ids). */
  id(bytes?: number): string;
  /** Uniform integer in [0, max). */
  int(max: number): number;
}

export const systemRandom: Random = {
  alphanumeric(length) {
    let out = '';
    for (let i = 0; i < length; i++) out += ALPHANUMERIC[randomInt(ALPHANUMERIC.length)];
    return out;
  },
  id(bytes = 12) {
    return randomBytes(bytes).toString('base64url');
  },
  int(max) {
    return randomInt(max);
  },
};
