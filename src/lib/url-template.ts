// RFC 6570 URL templates, as far as code playgrounds need them: whether a template is
// well formed, and the names of its variables.

const OPERATORS = '+#./;?&';
const VARNAME = /^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$/;
/** Characters a literal part may not hold (RFC 6570 section 2.1), control characters aside. */
const BAD_LITERAL = /[\s"'%<>\\^`{|}]/;
const hasControl = (s: string): boolean => [...s].some((c) => c.charCodeAt(0) < 0x20);

/** The template's variable names in order, or null when it is not a valid template. */
export function templateVariables(template: string): string[] | null {
  const names: string[] = [];
  let rest = template;
  while (rest !== '') {
    const open = rest.indexOf('{');
    const literal = open < 0 ? rest : rest.slice(0, open);
    // Percent-encoded triplets are allowed in literals; other % signs are not.
    if (BAD_LITERAL.test(literal.replace(/%[0-9A-Fa-f]{2}/g, '')) || hasControl(literal)) {
      return null;
    }
    if (open < 0) break;
    const close = rest.indexOf('}', open);
    if (close < 0) return null;
    let body = rest.slice(open + 1, close);
    if (body !== '' && OPERATORS.includes(body[0])) body = body.slice(1);
    if (body === '') return null;
    for (const spec of body.split(',')) {
      const name = spec.replace(/(\*|:[1-9][0-9]{0,3})$/, '');
      if (!VARNAME.test(name)) return null;
      names.push(name);
    }
    rest = rest.slice(close + 1);
  }
  return names;
}
