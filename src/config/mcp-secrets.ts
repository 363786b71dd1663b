import { MCP_SECRET_REFERENCE, type McpServerConfig } from './schema.js';

// An MCP server's `env` and `headers` values name secrets (`${NAME}`, a variable of the daemon's environment),
// never hold them: the configuration file stays free of credentials, and a secret reaches only the server that
// names it, when it starts (src/agent/mcp/). The daemon refuses to start while a named secret is unset.

export type SecretSource = Readonly<Record<string, string | undefined>>;

/** The secrets a template names, in order. */
export function secretNames(template: string): string[] {
  return [...template.matchAll(MCP_SECRET_REFERENCE)].map((m) => m[1]!);
}

/** A set, non-empty value (an empty variable counts as unset, as everywhere in the configuration). */
function secretValue(env: SecretSource, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value === '' ? undefined : value;
}

/** The template with each `${NAME}` replaced by its secret; throws naming the first one unset. */
export function resolveSecretTemplate(template: string, env: SecretSource): string {
  return template.replace(MCP_SECRET_REFERENCE, (_, name: string) => {
    const value = secretValue(env, name);
    if (value === undefined) throw new Error(`the secret ${name} is not set in the environment`);
    return value;
  });
}

/** Every secret value one server's env and headers name (to redact from what it prints). */
export function serverSecrets(server: McpServerConfig, env: SecretSource): string[] {
  const names = [...Object.values(server.env), ...Object.values(server.headers)].flatMap(secretNames);
  return names.map((name) => secretValue(env, name)).filter((v): v is string => v !== undefined);
}

/** One problem per env or header value of `mcp.servers` that names a secret not set in `env`. */
export function mcpSecretProblems(
  servers: Readonly<Record<string, McpServerConfig>>,
  env: SecretSource,
): string[] {
  const problems: string[] = [];
  for (const [server, config] of Object.entries(servers)) {
    for (const part of ['env', 'headers'] as const) {
      for (const [key, template] of Object.entries(config[part])) {
        for (const name of secretNames(template)) {
          if (secretValue(env, name) !== undefined) continue;
          problems.push(
            `mcp.servers.${server}.${part}.${key}: names the secret ${name}, which is not set in the environment`,
          );
        }
      }
    }
  }
  return problems;
}
