/**
 * The stand-in refuses what the real API refuses, per model, with the API's text; and accepts what each
 * model takes. Texts are spelled out here (not imported) so a change to one shows up as a test change.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeClock } from '../support/fake-clock.js';
import { MODEL_RULES, RETIRED_MODELS, rulesFor } from '../support/model-rules.js';
import {
  type ModelServer,
  script,
  startModelServer,
  validateMessagesRequest,
} from '../support/model-server.js';
import { assistant, expect400, expectApiError, post, sdk, user } from './helpers.js';

const ENABLED =
  '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
const DISABLED_ADAPTIVE =
  '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
const DISABLED_SONNET_5_5 =
  'To turn thinking off on this model, send "thinking": {"type": "between_tools"} instead of {"type": "disabled"}. The model does not think before responding. The short updates it writes between tool calls come back as thinking blocks.';
const ADAPTIVE = 'adaptive thinking is not supported on this model';
const BETWEEN_TOOLS = '"thinking.type.between_tools" is not supported for this model.';
const PREFILL =
  'This model does not support assistant message prefill. The conversation must end with a user message.';
const FORCED = 'tool_choice: type "tool" and "any" are not supported for this model.';
const FORCED_WITH_THINKING = 'Thinking may not be enabled when tool_choice forces tool use.';
const BOTH_SAMPLING =
  '`temperature` and `top_p` cannot both be specified for this model. Please use only one.';
const effortOff = (e: string) =>
  `output_config.effort '${e}' is not supported when thinking is disabled on this model. Use effort 'high' or below, or enable thinking.`;

const TOOLS = [{ name: 'bash', description: 'Run a command', input_schema: { type: 'object' } }];

function params(model: string, extra: Record<string, unknown> = {}): any {
  return { model, max_tokens: 4096, messages: [user('hello')], ...extra };
}

/** The day the rules were last read against the docs: the server's date here, so retirements are fixed. */
const TODAY = Date.UTC(2026, 11, 4);
/** The models that still answer on TODAY (Sonnet 4.5 retired on 2026-11-30). */
const SERVING = MODEL_RULES.filter((r) => rulesFor(r.id, TODAY) !== undefined);

describe('strict per-model contract', () => {
  let server: ModelServer;

  beforeEach(async () => {
    server = await startModelServer({ now: () => TODAY });
    server.setFallback(script.text('ok'));
  });

  afterEach(async () => {
    await server.close();
  });

  const refusals: Array<[string, string, Record<string, unknown>, string]> = [
    // thinking: disabled
    ['claude-sonnet-5-5', 'thinking disabled', { thinking: { type: 'disabled' } }, DISABLED_SONNET_5_5],
    ['claude-opus-5-5', 'thinking disabled', { thinking: { type: 'disabled' } }, DISABLED_ADAPTIVE],
    ['claude-fable-5-1', 'thinking disabled', { thinking: { type: 'disabled' } }, DISABLED_ADAPTIVE],
    ['claude-fable-5', 'thinking disabled', { thinking: { type: 'disabled' } }, DISABLED_ADAPTIVE],
    // thinking: enabled with a budget
    ...([
      'claude-sonnet-5-5',
      'claude-opus-5-5',
      'claude-haiku-5-5',
      'claude-sonnet-5',
      'claude-opus-5',
      'claude-opus-4-8',
    ].map(
      (m) =>
        [m, 'a thinking budget', { thinking: { type: 'enabled', budget_tokens: 2048 } }, ENABLED] as [
          string,
          string,
          Record<string, unknown>,
          string,
        ],
    ) as Array<[string, string, Record<string, unknown>, string]>),
    // The schema check on the budget fires before the model's own refusal.
    [
      'claude-opus-5',
      'a budget below 1024',
      { thinking: { type: 'enabled', budget_tokens: 400 } },
      'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
    ],
    // thinking: adaptive on the 4.5 generation
    ['claude-haiku-4-5', 'adaptive thinking', { thinking: { type: 'adaptive' } }, ADAPTIVE],
    ['claude-haiku-4-5-20251001', 'adaptive thinking', { thinking: { type: 'adaptive' } }, ADAPTIVE],
    ['claude-opus-4-5', 'adaptive thinking', { thinking: { type: 'adaptive' } }, ADAPTIVE],
    // thinking: between_tools anywhere but Sonnet 5.5
    ['claude-opus-5-5', 'between_tools', { thinking: { type: 'between_tools' } }, BETWEEN_TOOLS],
    ['claude-haiku-5-5', 'between_tools', { thinking: { type: 'between_tools' } }, BETWEEN_TOOLS],
    ['claude-sonnet-5', 'between_tools', { thinking: { type: 'between_tools' } }, BETWEEN_TOOLS],
    ['claude-haiku-4-5', 'between_tools', { thinking: { type: 'between_tools' } }, BETWEEN_TOOLS],
    [
      'claude-sonnet-5-5',
      'between_tools with display',
      { thinking: { type: 'between_tools', display: 'summarized' } },
      'thinking.between_tools.display: Extra inputs are not permitted',
    ],
    // effort with thinking off
    [
      'claude-sonnet-5-5',
      'between_tools at xhigh',
      { thinking: { type: 'between_tools' }, output_config: { effort: 'xhigh' } },
      effortOff('xhigh'),
    ],
    [
      'claude-sonnet-5-5',
      'between_tools at max',
      { thinking: { type: 'between_tools' }, output_config: { effort: 'max' } },
      effortOff('max'),
    ],
    [
      'claude-haiku-5-5',
      'disabled at max',
      { thinking: { type: 'disabled' }, output_config: { effort: 'max' } },
      effortOff('max'),
    ],
    [
      'claude-opus-5',
      'disabled at xhigh',
      { thinking: { type: 'disabled' }, output_config: { effort: 'xhigh' } },
      effortOff('xhigh'),
    ],
    // effort levels the model does not take
    [
      'claude-haiku-4-5',
      'any effort',
      { output_config: { effort: 'low' } },
      'This model does not support the effort parameter.',
    ],
    [
      'claude-sonnet-4-6',
      'effort xhigh',
      { output_config: { effort: 'xhigh' } },
      "output_config.effort 'xhigh' is not supported on this model. Use one of: 'low', 'medium', 'high', 'max'.",
    ],
    [
      'claude-opus-4-5',
      'effort max',
      { output_config: { effort: 'max' } },
      "output_config.effort 'max' is not supported on this model. Use one of: 'low', 'medium', 'high'.",
    ],
    [
      'claude-sonnet-5-5',
      'an unknown effort',
      { output_config: { effort: 'extreme' } },
      "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'",
    ],
    // display
    [
      'claude-sonnet-5-5',
      'an unknown display',
      { thinking: { type: 'adaptive', display: 'verbose' } },
      "thinking.adaptive.display: Input should be 'summarized' or 'omitted'",
    ],
    [
      'claude-sonnet-5-5',
      'display updates without its beta header',
      { thinking: { type: 'adaptive', display: 'updates' } },
      "thinking.adaptive.display: Input should be 'summarized' or 'omitted'",
    ],
    [
      'claude-sonnet-5-5',
      'block_binding without its beta header',
      { thinking: { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop_block' } } },
      'thinking.adaptive.block_binding: Extra inputs are not permitted',
    ],
    // max_tokens above the model's cap
    [
      'claude-sonnet-5-5',
      'max_tokens 128001',
      { max_tokens: 128_001 },
      'max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens for claude-sonnet-5-5',
    ],
    [
      'claude-opus-5-5',
      'max_tokens 200000',
      { max_tokens: 200_000 },
      'max_tokens: 200000 > 128000, which is the maximum allowed number of output tokens for claude-opus-5-5',
    ],
    [
      'claude-haiku-5-5',
      'max_tokens 128001',
      { max_tokens: 128_001 },
      'max_tokens: 128001 > 128000, which is the maximum allowed number of output tokens for claude-haiku-5-5',
    ],
    [
      'claude-haiku-4-5',
      'max_tokens 64001',
      { max_tokens: 64_001 },
      'max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-haiku-4-5',
    ],
    [
      'claude-opus-4-5-20251101',
      'max_tokens 64001',
      { max_tokens: 64_001 },
      'max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-opus-4-5-20251101',
    ],
    // prefill
    ...([
      'claude-sonnet-5-5',
      'claude-opus-5-5',
      'claude-sonnet-5',
      'claude-sonnet-4-6',
      'claude-fable-5-1',
    ].map(
      (m) =>
        [m, 'prefill', { messages: [user('hi'), assistant('The answer is')] }, PREFILL] as [
          string,
          string,
          Record<string, unknown>,
          string,
        ],
    ) as Array<[string, string, Record<string, unknown>, string]>),
    [
      'claude-haiku-5-5',
      'prefill with thinking off',
      { thinking: { type: 'disabled' }, messages: [user('hi'), assistant('The answer is')] },
      PREFILL,
    ],
    // forced tool_choice
    ['claude-sonnet-5-5', 'tool_choice any', { tools: TOOLS, tool_choice: { type: 'any' } }, FORCED],
    [
      'claude-sonnet-5-5',
      'tool_choice tool',
      { tools: TOOLS, tool_choice: { type: 'tool', name: 'bash' } },
      FORCED,
    ],
    ['claude-opus-5-5', 'tool_choice any', { tools: TOOLS, tool_choice: { type: 'any' } }, FORCED],
    [
      'claude-fable-5-1',
      'tool_choice tool',
      { tools: TOOLS, tool_choice: { type: 'tool', name: 'bash' } },
      FORCED,
    ],
    [
      'claude-haiku-4-5',
      'tool_choice any with a thinking budget',
      { tools: TOOLS, tool_choice: { type: 'any' }, thinking: { type: 'enabled', budget_tokens: 1024 } },
      FORCED_WITH_THINKING,
    ],
    // mid-conversation system messages
    [
      'claude-sonnet-4-6',
      'a system-role message',
      { messages: [user('hi'), { role: 'system', content: 'Be brief.' }] },
      "messages.1.role: Input should be 'user' or 'assistant'",
    ],
    [
      'claude-sonnet-5-5',
      'a system-role message first',
      { messages: [{ role: 'system', content: 'Be brief.' }, user('hi')] },
      'messages.0: a message with role "system" cannot be the first message',
    ],
  ];

  it.each(refusals)('%s refuses %s', async (model, _setting, patch, message) => {
    await expect400(sdk(server).messages.create(params(model, patch)), message);
    expect(server.requests.at(-1)!.error).toEqual({ type: 'invalid_request_error', message });
    // The same check, statelessly.
    expect(validateMessagesRequest(params(model, patch), { headers: server.requests.at(-1)!.headers })).toBe(
      message,
    );
  });

  it('refuses sampling parameters under API version 2026-10-21 (what the SDK sends) on every model', async () => {
    for (const model of ['claude-sonnet-5-5', 'claude-haiku-4-5', 'claude-sonnet-4-6']) {
      for (const [field, value] of [
        ['temperature', 1],
        ['top_p', 0.9],
        ['top_k', 40],
      ] as const) {
        await expect400(
          sdk(server).messages.create(params(model, { [field]: value })),
          `${field}: Extra inputs are not permitted`,
        );
      }
    }
    expect(server.requests.every((r) => r.headers['anthropic-version'] === '2026-10-21')).toBe(true);
  });

  const legacySampling: Array<[string, Record<string, unknown>, string | null]> = [
    ['claude-sonnet-5-5', { temperature: 0.5 }, '`temperature` is deprecated for this model.'],
    ['claude-sonnet-5-5', { temperature: 1 }, null],
    ['claude-sonnet-5-5', { top_p: 0.9 }, '`top_p` is deprecated for this model.'],
    ['claude-sonnet-5-5', { top_k: 40 }, '`top_k` is deprecated for this model.'],
    ['claude-opus-5-5', { temperature: 0 }, '`temperature` is deprecated for this model.'],
    ['claude-haiku-5-5', { top_p: 1 }, '`top_p` is deprecated for this model.'],
    ['claude-haiku-5-5', { top_p: 0.99 }, null],
    ['claude-haiku-5-5', { temperature: 1, top_p: 0.99 }, BOTH_SAMPLING],
    ['claude-haiku-4-5', { temperature: 0.2, top_p: 0.9 }, BOTH_SAMPLING],
    ['claude-sonnet-4-6', { temperature: 0.2, top_p: 0.9 }, BOTH_SAMPLING],
    ['claude-haiku-4-5', { temperature: 0.2 }, null],
    ['claude-opus-4-5', { top_k: 5 }, null],
  ];

  it.each(legacySampling)('under 2023-06-01, %s with %j → %s', async (model, patch, message) => {
    const res = await post(server, params(model, patch));
    if (message === null) {
      expect(res.status).toBe(200);
      return;
    }
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ type: 'invalid_request_error', message });
  });

  it('refuses a model from its retirement date on, as it refuses an unknown one', async () => {
    const clock = new FakeClock(Date.UTC(2026, 10, 29, 23, 59));
    const dated = await startModelServer({ clock });
    try {
      dated.setFallback(script.text('ok'));
      // The day before: Sonnet 4.5 (and its dated ID) still answer.
      for (const model of ['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929']) {
        expect((await sdk(dated).messages.create(params(model))).model).toBe(model);
      }
      clock.set(Date.UTC(2026, 10, 30));
      for (const model of ['claude-sonnet-4-5', 'claude-sonnet-4-5-20250929']) {
        await expectApiError(
          sdk(dated).messages.create(params(model)),
          404,
          'not_found_error',
          `model: ${model}`,
        );
      }
      // Opus 4.5 retires later (2027-01-22): it still answers.
      expect((await sdk(dated).messages.create(params('claude-opus-4-5'))).model).toBe('claude-opus-4-5');
      expect(dated.requests.map((r) => r.status)).toEqual([200, 200, 404, 404, 200]);
    } finally {
      await dated.close();
    }
  });

  it('answers 404 `model: <id>` for unknown and retired models', async () => {
    for (const model of ['claude-foo', ...RETIRED_MODELS, 'claude-sonnet-4-5']) {
      await expectApiError(
        sdk(server).messages.create(params(model)),
        404,
        'not_found_error',
        `model: ${model}`,
      );
    }
    expect(server.requests.every((r) => r.status === 404)).toBe(true);
  });

  it('refuses more than 4 cache_control breakpoints, the top-level one included', async () => {
    const cc = { type: 'ephemeral' };
    const five = params('claude-sonnet-5-5', {
      system: [
        { type: 'text', text: 'a', cache_control: cc },
        { type: 'text', text: 'b', cache_control: cc },
      ],
      tools: TOOLS.map((t) => ({ ...t, cache_control: cc })),
      messages: [
        user([
          { type: 'text', text: 'c', cache_control: cc },
          { type: 'text', text: 'd', cache_control: cc },
        ]),
      ],
    });
    await expect400(
      sdk(server).messages.create(five),
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
    const four = { ...five, tools: TOOLS };
    expect((await sdk(server).messages.create(four)).content.at(-1)).toEqual({ type: 'text', text: 'ok' });
    await expect400(
      sdk(server).messages.create({ ...four, cache_control: cc }),
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
  });

  it('refuses a custom tool whose name or input property names the API does not take', async () => {
    const tool = (name: string, properties: Record<string, unknown>) => ({
      name,
      description: 'a tool',
      input_schema: { type: 'object', properties },
    });
    const ask = (tools: unknown[]) =>
      sdk(server).messages.create(params('claude-sonnet-5-5', { tools, messages: [user('hi')] }) as any);
    await expect400(
      ask([tool('Read', {}), tool('mcp__srv__dotted.name', {})]),
      "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
    );
    await expect400(
      ask([tool(`mcp__${'x'.repeat(124)}`, {})]),
      "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
    );
    await expect400(
      ask([tool('mcp__srv__q', { 'has space': { type: 'string' } })]),
      "tools.0.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'",
    );
    const fits = await ask([tool(`mcp__${'x'.repeat(123)}`, { 'a.b-c_d': { type: 'string' } })]);
    expect(fits.content.at(-1)).toEqual({ type: 'text', text: 'ok' });
  });

  it('refuses a 1h breakpoint after a 5m one', async () => {
    await expect400(
      sdk(server).messages.create(
        params('claude-sonnet-5-5', {
          system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
          messages: [user([{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral', ttl: '1h' } }])],
        }),
      ),
      "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block",
    );
  });

  it('still refuses a tool_use without its tool_result first in the next user message', async () => {
    await expect400(
      sdk(server).messages.create(
        params('claude-sonnet-5-5', {
          tools: TOOLS,
          thinking: { type: 'between_tools' },
          messages: [
            user('go'),
            assistant([{ type: 'tool_use', id: 'toolu_a', name: 'bash', input: {} }]),
            user('what happened?'),
          ],
        }),
      ),
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    );
  });

  it('refuses tool results that do not open the next user message', async () => {
    await expect400(
      sdk(server).messages.create(
        params('claude-haiku-4-5', {
          tools: TOOLS,
          messages: [
            user('go'),
            assistant([{ type: 'tool_use', id: 'toolu_b', name: 'bash', input: {} }]),
            user([
              { type: 'text', text: 'Here is the output:' },
              { type: 'tool_result', tool_use_id: 'toolu_b', content: 'ok' },
            ]),
          ],
        }),
      ),
      'messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
    );
  });

  it('refuses without consuming the script', async () => {
    server.setFallback(null);
    server.enqueue(script.text('kept'));
    await expect400(
      sdk(server).messages.create(params('claude-sonnet-5-5', { thinking: { type: 'disabled' } })),
      DISABLED_SONNET_5_5,
    );
    expect(server.remaining()).toBe(1);
  });

  describe('accepts', () => {
    it.each(SERVING.map((r) => [r.id, r] as const))(
      '%s with defaults and each thinking type it takes',
      async (id, rules) => {
        const anthropic = sdk(server);
        const answer = await anthropic.messages.create(params(id));
        expect(answer.content.at(-1)).toEqual({ type: 'text', text: 'ok' });
        for (const type of rules.thinking) {
          const thinking = type === 'enabled' ? { type, budget_tokens: 1024 } : { type };
          const res = await anthropic.messages.create(params(id, { thinking }));
          expect(res.stop_reason).toBe('end_turn');
        }
        for (const alias of rules.aliases ?? []) {
          expect((await anthropic.messages.create(params(alias))).model).toBe(alias);
        }
        const atCap = await anthropic.messages.create({
          ...params(id),
          max_tokens: rules.maxOutput,
          stream: false,
        });
        expect(atCap.type).toBe('message');
      },
    );

    it('each effort level a model takes, and the defaults of the 5.5 models', async () => {
      const anthropic = sdk(server);
      for (const rules of SERVING) {
        for (const effort of rules.efforts) {
          await anthropic.messages.create(params(rules.id, { output_config: { effort } }));
        }
      }
      for (const effort of ['low', 'medium', 'high'] as const) {
        await anthropic.messages.create(
          params('claude-sonnet-5-5', { thinking: { type: 'between_tools' }, output_config: { effort } }),
        );
      }
      expect(server.requests.every((r) => r.status === 200)).toBe(true);
    });

    it('prefill on the 4.5 generation, and forced tool_choice where the model takes it', async () => {
      const anthropic = sdk(server);
      for (const model of ['claude-haiku-4-5', 'claude-opus-4-5']) {
        await anthropic.messages.create(
          params(model, { messages: [user('hi'), assistant('The answer is')] }),
        );
      }
      for (const model of ['claude-haiku-5-5', 'claude-sonnet-5', 'claude-opus-5', 'claude-haiku-4-5']) {
        await anthropic.messages.create(params(model, { tools: TOOLS, tool_choice: { type: 'any' } }));
      }
      await anthropic.messages.create(
        params('claude-sonnet-4-6', {
          tools: TOOLS,
          tool_choice: { type: 'any' },
          thinking: { type: 'adaptive' },
        }),
      );
      await anthropic.messages.create(
        params('claude-sonnet-5-5', { tools: TOOLS, tool_choice: { type: 'auto' } }),
      );
      expect(server.requests.every((r) => r.status === 200)).toBe(true);
    });

    it('display updates with its beta header, and a system message after a user turn', async () => {
      const res = await post(
        server,
        params('claude-sonnet-5-5', { thinking: { type: 'adaptive', display: 'updates' } }),
        { beta: 'thinking-display-updates-2026-08-18' },
      );
      expect(res.status).toBe(200);
      const sys = await sdk(server).messages.create(
        params('claude-opus-5-5', {
          messages: [user('hi'), { role: 'system', content: 'Answer in French.' }],
        }),
      );
      expect(sys.content.at(-1)).toEqual({ type: 'text', text: 'ok' });
    });

    it('count_tokens with the model checks, without prefill or max_tokens', async () => {
      const counted = await sdk(server).messages.countTokens({
        model: 'claude-sonnet-5-5',
        messages: [user('hi'), assistant('partial')],
      });
      expect(counted.input_tokens).toBeGreaterThan(0);
      await expect400(
        sdk(server).messages.countTokens({
          model: 'claude-sonnet-5-5',
          messages: [user('hi')],
          tools: TOOLS,
          tool_choice: { type: 'any' },
        } as any),
        FORCED,
      );
    });
  });
});
