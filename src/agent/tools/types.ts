/** What a tool call returns to the agent loop, which turns it into a `tool_result` block. */
export interface ToolResult {
  /** Text for the model. Never holds the absolute workspace root or anything from outside the workspace. */
  content: string;
  isError: boolean;
  /** Set when the content was cut to fit a limit; the content itself says how to get the rest. */
  truncated?: boolean;
}

/** A tool as sent to the Messages API (`tools: [...]`). */
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: {
    type: 'object';
    properties: Record<string, unknown>;
    required?: string[];
    additionalProperties?: boolean;
  };
}

export function errorResult(message: string): ToolResult {
  return { content: message, isError: true };
}
