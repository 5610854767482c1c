// A browser stand-in for the sign-in scripts: it follows an OpenID
// provider's pages as a browser would, keeping cookies per host, following
// redirects by hand, posting the login form (login and any password) and
// the consent form, until it reaches the redirect URI, which it returns.
// pages lists every request and its status, ids shortened to "…".
export function browser(login, redirect) {
  const jar = new Map();
  const pages = [];
  async function browse(u, init = {}) {
    for (let hop = 0; hop < 20; hop++) {
      const target = new URL(u);
      if (target.href.startsWith(redirect)) return target;
      const headers = { ...(init.headers ?? {}), Cookie: jar.get(target.host) ?? "" };
      const res = await fetch(target, { ...init, headers, redirect: "manual" });
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(";");
        const [name] = pair.split("=");
        const kept = (jar.get(target.host) ?? "").split("; ").filter((p) => p && !p.startsWith(name + "="));
        jar.set(target.host, [...kept, pair].join("; "));
      }
      pages.push(`${init.method ?? "GET"} ${target.pathname.replace(/\/[A-Za-z0-9_-]{20,}/g, "/…")} ${res.status}`);
      if (res.status >= 300 && res.status < 400) {
        u = new URL(res.headers.get("location"), target).href;
        init = {};
        continue;
      }
      const html = await res.text();
      const form = html.match(/<form[^>]*action="([^"]+)"[^>]*method="post"|<form[^>]*method="post"[^>]*action="([^"]+)"/i);
      if (!form) throw new Error(`no form at ${target}: HTTP ${res.status} ${html.slice(0, 300)}`);
      const body = new URLSearchParams();
      for (const m of html.matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) body.set(m[1], m[2]);
      if (/name="login"/.test(html)) { body.set("login", login); body.set("password", "any"); }
      u = new URL(form[1] ?? form[2], target).href;
      init = { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body: body.toString() };
    }
    throw new Error("too many hops");
  }
  return { browse, pages };
}
