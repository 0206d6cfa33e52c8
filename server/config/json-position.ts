// Where a JSON text stops being JSON. JSON.parse says whether a text is valid, but Node 20's
// messages often omit the position ("Unexpected token '}', ... is not valid JSON"); this scanner
// finds the offset of the first error and says what was expected there, in JSON's own terms.

export type JsonSyntaxError = { offset: number; message: string };

/** `end`: how the messages name the end of the text (a file's, a request body's). */
export function jsonSyntaxError(text: string, end = 'the end of the file'): JsonSyntaxError | null {
  let i = 0;
  class Stop extends Error {
    constructor(readonly at: number, message: string) {
      super(message);
    }
  }
  const describe = (at: number) => (at >= text.length ? end : `'${text[at]}'`);
  const fail = (expected: string, at = i): never => {
    throw new Stop(at, `expected ${expected}, found ${describe(at)}`);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const string = () => {
    i++; // opening quote
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') return void i++;
      if (c === '\\') {
        const e = text[i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new Stop(i, 'bad \\u escape in a string (four hex digits expected)');
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else throw new Stop(i, 'bad escape in a string');
        continue;
      }
      if (c < ' ') throw new Stop(i, 'a line break or control character inside a string (write it as \\n)');
      i++;
    }
    throw new Stop(i, 'unterminated string');
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail(text[i] === '}' ? "a property name (no comma before '}')" : 'a double-quoted property name');
        string();
        ws();
        if (text[i] !== ':') fail("':' after the property name");
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') return void i++;
        fail("',' or '}' after a property value");
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        ws();
        if (text[i] === ']') fail("a value (no comma before ']')");
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') return void i++;
        fail("',' or ']' after an array element");
      }
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(i, i + 400));
    if (literal) return void (i += literal[0].length);
    fail('a value');
  };
  try {
    value();
    ws();
    if (i < text.length) fail(`${end} after the top-level value`);
    return null;
  } catch (err) {
    if (err instanceof Stop) return { offset: err.at, message: err.message };
    throw err;
  }
}
