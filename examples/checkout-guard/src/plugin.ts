// checkout-guard: an approval policy that keeps an agent on the sites it was
// sent to and puts a person between it and the pages where money moves.
// The engine asks it before every operation (REST, MCP and plugin actions
// alike); the operator configures it in the policy file (`--policy FILE`):
//
//   [checkout_guard]
//   # Hosts the agent may open, with their subdomains (absent or empty: any).
//   allowed_hosts = ["shop.example"]
//   # Pages (path prefixes) where clicks, typing and uploads wait for a
//   # person's approval (POST /api/v1/approvals/{id}), and where the
//   # caller's own scripts (execute, curl) are refused outright.
//   guarded_paths = ["/checkout", "/payment"]
//   # Users who act on guarded pages without asking (a supervised session).
//   trusted_users = ["alice"]
//
// Reads (screenshots, snapshots, tabs, history) are always allowed, so a
// person can see what the agent is about to do.

import { allow, ask, deny, policy as decider, type PolicyRequest } from "@wabp/plugin";

interface Settings {
  allowed_hosts?: string[];
  guarded_paths?: string[];
  trusted_users?: string[];
}

interface Place {
  host: string;
  path: string;
}

/** Host and path of an absolute URL (`undefined` for about:, data:, ...). */
function place(url: string | undefined): Place | undefined {
  const match = url ? /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^:/?#]+)(?::\d+)?([^?#]*)/i.exec(url) : null;
  if (!match) return undefined;
  return { host: match[1].toLowerCase().replace(/\.$/, ""), path: match[2] || "/" };
}

function within(host: string, allowed: string): boolean {
  const domain = allowed.toLowerCase();
  return host === domain || host.endsWith(`.${domain}`);
}

/** The guarded path prefix `path` starts with, if any. */
function guarded(path: string, prefixes: string[]): string | undefined {
  return prefixes.find((prefix) => path.startsWith(prefix));
}

function strings(value: unknown, field: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    // A malformed policy file must not open the door: the engine denies
    // every operation while this throws.
    throw new Error(`[checkout_guard] ${field} must be a list of strings`);
  }
  return value;
}

export const policy = decider((settings: { checkout_guard?: Settings }, request: PolicyRequest) => {
  const config = settings.checkout_guard ?? {};
  const allowedHosts = strings(config.allowed_hosts, "allowed_hosts");
  const guardedPaths = strings(config.guarded_paths, "guarded_paths");
  const trustedUsers = strings(config.trusted_users, "trusted_users");

  if (request.category === "navigation" && request.targetUrl && allowedHosts.length > 0) {
    const target = place(request.targetUrl);
    if (target && !allowedHosts.some((h) => within(target.host, h))) {
      return deny(`checkout-guard: ${target.host} is not one of the allowed hosts (${allowedHosts.join(", ")})`);
    }
  }

  const tab = place(request.tabUrl);
  const prefix = tab && guarded(tab.path, guardedPaths);
  if (!prefix || (request.user && trustedUsers.includes(request.user))) return allow;
  switch (request.category) {
    case "script":
      return deny(`checkout-guard: ${request.operation} is refused on ${tab.path}: a script could pay without asking`);
    case "mutation":
    case "input":
      return ask(`checkout-guard: ${request.operation} on ${tab.host}${tab.path} (a ${prefix} page) needs a person's approval`);
    default:
      return allow;
  }
});
