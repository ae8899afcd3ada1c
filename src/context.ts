// AppContext: everything an action, route, worker or CLI command needs, passed explicitly.
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Store, Db } from './store/db.ts';
import type { EventBus } from './events/bus.ts';
import type { EventQueues } from './events/queues.ts';
import type { Clock } from './infra/clock.ts';
import type { FileStore } from './infra/files.ts';
import type { HttpClient } from './infra/http-client.ts';
import type { Images } from './infra/images.ts';
import type { Mailer } from './infra/mailer.ts';
import type { PasswordHasher } from './infra/passwords.ts';
import type { Random } from './infra/random.ts';

export interface AppContext {
  config: Config;
  store: Store;
  db: Db;
  bus: EventBus;
  queues: EventQueues;
  clock: Clock;
  /** Uploaded files (on disk under config.uploadsDir). */
  files: FileStore;
  images: Images;
  /** Outgoing HTTP (webhooks), refusing private addresses unless allowed. */
  http: HttpClient;
  passwords: PasswordHasher;
  /** Outgoing email (invitations); a log file under dataDir by default. */
  mailer: Mailer;
  random: Random;
  log: Logger;
}
