// A test client that talks to the app through HTTP (app.inject) as a real client would:
// form-encoded parameters, JSON text for arrays and objects, Basic authentication.
import type {
  FastifyInstance,
  InjectOptions,
  LightMyRequestResponse as LightResponse,
} from 'fastify';

export interface Credentials {
  email: string;
  api_key: string;
  /** Host header; defaults to the default organization's host. */
  host?: string;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Record<string, unknown>;
  text: string;
}

export type Params = Record<string, unknown>;

/** Form-encode parameters: strings as they are, everything else as JSON text. */
export function encodeParams(params: Params): string {
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    search.append(k, typeof v === 'string' ? v : JSON.stringify(v));
  }
  return search.toString();
}

export function basicAuth(email: string, key: string): string {
  return `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;
}

export class Client {
  constructor(
    private readonly app: FastifyInstance,
    private readonly who: Credentials | null,
    private readonly extraHeaders: Record<string, string> = {},
  ) {}

  withHeaders(headers: Record<string, string>): Client {
    return new Client(this.app, this.who, { ...this.extraHeaders, ...headers });
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = {
      host: this.who?.host ?? 'parley.test',
      ...this.extraHeaders,
    };
    if (this.who) h.authorization = basicAuth(this.who.email, this.who.api_key);
    return h;
  }

  async request(
    method: string,
    path: string,
    params: Params = {},
    opts: { asQuery?: boolean } = {},
  ): Promise<ApiResponse> {
    const encoded = encodeParams(params);
    const inQuery = method === 'GET' || opts.asQuery;
    const url = `/api/v1${path}${inQuery && encoded ? `?${encoded}` : ''}`;
    const res = await this.app.inject({
      method: method as 'GET',
      url,
      headers: {
        ...this.headers(),
        ...(!inQuery && encoded ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(!inQuery && encoded ? { payload: encoded } : {}),
    });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(res.body) as Record<string, unknown>;
    } catch {
      body = {};
    }
    return { status: res.statusCode, headers: res.headers, body, text: res.body };
  }

  get(path: string, params?: Params): Promise<ApiResponse> {
    return this.request('GET', path, params);
  }
  post(path: string, params?: Params): Promise<ApiResponse> {
    return this.request('POST', path, params);
  }
  patch(path: string, params?: Params): Promise<ApiResponse> {
    return this.request('PATCH', path, params);
  }
  delete(path: string, params?: Params): Promise<ApiResponse> {
    return this.request('DELETE', path, params);
  }

  /**
   * Send the parameters as multipart/form-data, as some clients send every POST (values
   * encoded as request() does), with optional file parts.
   */
  async multipart(
    method: string,
    path: string,
    params: Params = {},
    files: Array<{ field: string; filename: string; contentType: string; data: Buffer }> = [],
  ): Promise<ApiResponse> {
    const boundary = `----parley-test-${Math.random().toString(36).slice(2)}`;
    const parts: Buffer[] = [];
    for (const [k, v] of Object.entries(params)) {
      if (v === undefined) continue;
      const value = typeof v === 'string' ? v : JSON.stringify(v);
      parts.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${value}\r\n`,
        ),
      );
    }
    for (const f of files) {
      parts.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${f.field}"; filename="${f.filename}"\r\nContent-Type: ${f.contentType}\r\n\r\n`,
        ),
        f.data,
        Buffer.from('\r\n'),
      );
    }
    parts.push(Buffer.from(`--${boundary}--\r\n`));
    const res = await this.app.inject({
      method: method as 'POST',
      url: `/api/v1${path}`,
      headers: { ...this.headers(), 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: Buffer.concat(parts),
    });
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(res.body) as Record<string, unknown>;
    } catch {
      body = {};
    }
    return { status: res.statusCode, headers: res.headers, body, text: res.body };
  }

  /** Raw inject for tests of malformed requests, with this client's host and credentials. */
  inject(opts: InjectOptions): Promise<LightResponse> {
    return this.app.inject({
      ...opts,
      headers: { ...this.headers(), ...(opts.headers as Record<string, string>) },
    });
  }
}

export const SUCCESS = { result: 'success', msg: '' } as const;
