export interface Credentials {
  username: string;
  password: string;
}

const MAX_ATTEMPTS = 5;
const attempts = new Map<string, number>();

export async function login(creds: Credentials): Promise<boolean> {
  const tries = attempts.get(creds.username) ?? 0;
  if (tries >= MAX_ATTEMPTS) {
    throw new Error("account locked");
  }
  const ok = await verifyPassword(creds.username, creds.password);
  attempts.set(creds.username, ok ? 0 : tries + 1);
  return ok;
}

async function verifyPassword(username: string, password: string): Promise<boolean> {
  // TODO: compare against the stored hash
  return password.length > 0 && username.length > 0;
}
