import { createPrivateKey } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

// The GitHub App's private key (github.app.private_key_file). The configuration holds only the file's path: the
// key is read where it is used (src/github/app-auth.ts) and checked when the configuration loads, so a missing,
// unreadable or wrong file stops the start with one line that names the file and never quotes it.
//
// GitHub hands an App's key out as a PEM file (PKCS#1, `-----BEGIN RSA PRIVATE KEY-----`) and verifies the JWT
// it signs with RS256 (https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app/
// managing-private-keys-for-github-apps, .../generating-a-json-web-token-jwt-for-a-github-app): an RSA key.

/** The key's PEM text, or why it cannot be used (a sentence that names the file and quotes none of it). */
export type AppKeyRead = { pem: string } | { problem: string };

/** Reads and checks the App's private key file: it exists, is readable, and holds an RSA private key. */
export function readAppPrivateKey(path: string): AppKeyRead {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory'
          : code === 'EACCES'
            ? 'permission denied (the daemon must be able to read it)'
            : (code ?? 'cannot be read');
    return { problem: `${path}: ${why}` };
  }
  let type: string | undefined;
  try {
    // The parser's own message is not shown: it is about the file's bytes, which are the secret.
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch {
    return {
      problem: `${path} holds no PEM private key (GitHub gives an App's key as a .pem file, -----BEGIN RSA PRIVATE KEY-----)`,
    };
  }
  if (type !== 'rsa') {
    return { problem: `${path} holds a key of type ${type ?? 'unknown'}; a GitHub App's key is RSA` };
  }
  return { pem };
}

/** Problems with github.app's key file, as `path: what is wrong` lines (none when no App is configured). */
export function appKeyProblems(privateKeyFile: string | null): string[] {
  if (privateKeyFile === null) return [];
  const read = readAppPrivateKey(privateKeyFile);
  return 'problem' in read ? [`github.app.private_key_file: ${read.problem}`] : [];
}

/** Whether others than the file's owner may read it (mode bits for group or others): doctor warns. */
export function keyReadableByOthers(path: string): boolean {
  try {
    return (statSync(path).mode & 0o044) !== 0;
  } catch {
    return false;
  }
}
