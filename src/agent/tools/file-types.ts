// File types for Grep's `type` option, named as ripgrep names them (`rg --type-list`), which models know.

export const FILE_TYPES: Readonly<Record<string, readonly string[]>> = {
  c: ['c', 'h'],
  cpp: ['cpp', 'cc', 'cxx', 'c++', 'hpp', 'hh', 'hxx', 'h', 'inl'],
  cs: ['cs'],
  css: ['css', 'scss', 'sass', 'less'],
  go: ['go'],
  html: ['html', 'htm'],
  java: ['java'],
  js: ['js', 'mjs', 'cjs', 'jsx'],
  json: ['json', 'jsonc'],
  kotlin: ['kt', 'kts'],
  lua: ['lua'],
  md: ['md', 'markdown', 'mdx'],
  php: ['php'],
  py: ['py', 'pyi'],
  rb: ['rb'],
  rust: ['rs'],
  sh: ['sh', 'bash', 'zsh'],
  sql: ['sql'],
  swift: ['swift'],
  toml: ['toml'],
  ts: ['ts', 'tsx', 'mts', 'cts'],
  yaml: ['yaml', 'yml'],
};

/** A test for file names of the given type, or undefined for a type this list does not know. */
export function fileTypeFilter(type: string): ((name: string) => boolean) | undefined {
  const extensions = Object.hasOwn(FILE_TYPES, type) ? FILE_TYPES[type] : undefined;
  if (extensions === undefined) return undefined;
  const set = new Set(extensions);
  return (name) => {
    const dot = name.lastIndexOf('.');
    return dot > 0 && set.has(name.slice(dot + 1).toLowerCase());
  };
}
