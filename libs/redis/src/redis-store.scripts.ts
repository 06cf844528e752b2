// The store's compound writes, as Lua so each is atomic (no lost update between instances). A key
// holds `<version>:<json>`; GETRANGE reads just the version. Integer replies read alike in RESP2/3.

/** The version of the entry at KEYS[1], or false when there is none. */
const READ_VERSION = `
local head = redis.call('GETRANGE', KEYS[1], 0, 24)
local version = false
if head ~= '' then
  local sep = string.find(head, ':', 1, true)
  version = sep and tonumber(string.sub(head, 1, sep - 1))
  if not version then return redis.error_reply('HUBTEL_STORE_CORRUPT ' .. KEYS[1] .. ' is not a store entry') end
end
`;

/** Writes `<version>:ARGV[2]`; TTL ARGV[3]: > 0 sets it (ms), -1 removes any expiry, 0 keeps it. */
const WRITE = `
local ttl = tonumber(ARGV[3])
local data = string.format('%d', nextv) .. ':' .. ARGV[2]
if ttl > 0 then
  redis.call('SET', KEYS[1], data, 'PX', ttl)
elseif ttl == 0 then
  redis.call('SET', KEYS[1], data, 'KEEPTTL')
else
  redis.call('SET', KEYS[1], data)
end
return nextv
`;

/** KEYS[1]; ARGV: expected version, json, ttl. The new version, or 0 when not written. */
export const COMPARE_AND_SET_LUA = `${READ_VERSION}
if version ~= tonumber(ARGV[1]) then return 0 end
local nextv = version + 1
${WRITE}`;

/** KEYS[1]; ARGV: (unused), json, ttl. The new version (1 when the key was absent or expired). */
export const SET_LUA = `${READ_VERSION}
local nextv = 1
if version then nextv = version + 1 end
${WRITE}`;

/** KEYS[1]; ARGV: expected version. 1 when deleted, 0 when absent or at another version. */
export const COMPARE_AND_DELETE_LUA = `${READ_VERSION}
if version ~= tonumber(ARGV[1]) then return 0 end
redis.call('DEL', KEYS[1])
return 1
`;
