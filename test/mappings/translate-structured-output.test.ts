// server/translate/structured-output.ts: the generated text checked against the requested JSON
// output, with a recorded structured answer (Anthropic output_format, a recipe) as the model output.
import { describe, expect, it } from 'vitest';
import { checkStructuredOutput } from '../../server/translate/structured-output.ts';
import { GatewayError } from '../../server/runtime/errors.ts';
import type * as C from '../../server/translate/canonical.ts';
import { VERCEL, atString, fixtureJson, thrownBy } from './fixtures.ts';

const recipeText = atString(fixtureJson(`${VERCEL}anthropic/src/__fixtures__/anthropic-json-output-format.1.json`), 'content', 0, 'text');
const recipeSchema = {
  type: 'object',
  properties: {
    recipe: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        ingredients: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, amount: { type: 'string' } }, required: ['name', 'amount'] } },
        steps: { type: 'array', items: { type: 'string' } },
      },
      required: ['name', 'ingredients', 'steps'],
    },
  },
  required: ['recipe'],
};
const text = (t: string): C.Response['content'] => [{ type: 'text', text: t }];
const schemaFormat = (schema: Record<string, unknown>, param?: string): C.ResponseFormat => ({ type: 'json_schema', name: 'recipe', schema, ...(param ? { param } : {}) });

function failure(format: C.ResponseFormat, content: C.Response['content']): unknown {
  const err = thrownBy(() => checkStructuredOutput(format, content, 'stop'));
  expect(err).toBeInstanceOf(GatewayError);
  return err;
}

describe('checkStructuredOutput', () => {
  it('accepts the recorded answer against its schema, also split over text parts around reasoning', () => {
    expect(() => checkStructuredOutput(schemaFormat(recipeSchema), text(recipeText), 'stop')).not.toThrow();
    const half = Math.floor(recipeText.length / 2);
    expect(() => checkStructuredOutput(schemaFormat(recipeSchema), [{ type: 'text', text: recipeText.slice(0, half) }, { type: 'reasoning', text: '}' }, { type: 'text', text: recipeText.slice(half) }], 'stop')).not.toThrow();
  });

  it('refuses an answer the schema does not match: 502 provider_error invalid_structured_output naming the path', () => {
    const schema = { ...recipeSchema, properties: { recipe: { ...recipeSchema.properties.recipe, required: ['name', 'servings'] } } };
    expect(failure(schemaFormat(schema, 'output_config.format'), text(recipeText))).toMatchObject({
      status: 502,
      type: 'provider_error',
      code: 'invalid_structured_output',
      param: 'output_config.format',
      message: "Structured output failed validation: the model output does not match the schema 'recipe' (/recipe must have required property 'servings').",
    });
  });

  it('refuses text that is not JSON, and for json_object a JSON value that is not an object', () => {
    expect(failure(schemaFormat(recipeSchema), text(recipeText.slice(0, -1)))).toMatchObject({
      param: 'response_format',
      message: 'Structured output failed validation: the model output is not valid JSON.',
    });
    expect(failure({ type: 'json_object', param: 'text.format' }, text('[1,2]'))).toMatchObject({
      param: 'text.format',
      message: 'Structured output failed validation: the model output is not a JSON object.',
    });
  });

  it('checks nothing for text format, no format, or an answer that did not finish normally', () => {
    for (const finish of ['tool_calls', 'length', 'content_filter', 'refusal'] as const) expect(() => checkStructuredOutput(schemaFormat(recipeSchema), text('not json'), finish)).not.toThrow();
    expect(() => checkStructuredOutput({ type: 'text' }, text('not json'), 'stop')).not.toThrow();
    expect(() => checkStructuredOutput(undefined, text('not json'), 'stop')).not.toThrow();
    expect(() => checkStructuredOutput(schemaFormat(recipeSchema), text('not json'), 'pause')).toThrow(GatewayError);
  });

  it("a schema ajv cannot compile is the client's: the JSON answer passes", () => {
    expect(() => checkStructuredOutput(schemaFormat({ type: 'no-such-type' }), text(recipeText), 'stop')).not.toThrow();
  });
});
