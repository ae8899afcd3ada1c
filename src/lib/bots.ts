// Bot types, outgoing-webhook interfaces, and the checks on what POST and PATCH /bots accept.
import { badRequest, JsonableError } from './errors.ts';
import { checkEmail } from './validation.ts';

export const BOT_TYPE = {
  generic: 1,
  incomingWebhook: 2,
  outgoingWebhook: 3,
  embedded: 4,
} as const;
const BOT_TYPES: number[] = Object.values(BOT_TYPE);

/** How an outgoing webhook posts: the native JSON payload, or Slack's form fields. */
export const SERVICE_INTERFACE = { generic: 1, slack: 2 } as const;
const SERVICE_INTERFACES: number[] = Object.values(SERVICE_INTERFACE);

/** Length of the fixed token an outgoing webhook sends with every request. */
export const BOT_SERVICE_TOKEN_LENGTH = 32;

export function checkBotType(botType: number): number {
  if (!BOT_TYPES.includes(botType)) throw badRequest('Invalid bot type');
  return botType;
}

export function checkInterfaceType(interfaceType: number): number {
  if (!SERVICE_INTERFACES.includes(interfaceType)) throw badRequest('Invalid interface type');
  return interfaceType;
}

export function missingArgument(name: string): JsonableError {
  return new JsonableError(`Missing '${name}' argument`, 'REQUEST_VARIABLE_MISSING', 400, {
    var_name: name,
  });
}

/**
 * An outgoing webhook URL: absolute http or https. The reference web client sends it as
 * JSON text ("\"https://…\""), other clients as plain text; both are accepted.
 */
export function checkPayloadUrl(name: string, raw: string): string {
  let text = raw.trim();
  if (text.startsWith('"')) {
    try {
      const decoded: unknown = JSON.parse(text);
      if (typeof decoded === 'string') text = decoded.trim();
    } catch {
      // Not JSON text: judged as a URL below, and refused.
    }
  }
  let url: URL | null;
  try {
    url = new URL(text);
  } catch {
    url = null;
  }
  if (!url || !(url.protocol === 'http:' || url.protocol === 'https:') || !url.hostname) {
    throw badRequest(`${name} is not an http or https URL`);
  }
  return text;
}

/** The bot's address: `<short_name>-bot@<the organization's host without port>`. */
export function botEmail(rawShortName: string, domain: string): string {
  const shortName = rawShortName.trim();
  if (shortName === '') throw badRequest('Bad name or username');
  try {
    return checkEmail(`${shortName}-bot@${domain}`);
  } catch {
    throw badRequest('Bad name or username');
  }
}
