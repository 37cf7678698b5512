// The lich contract release these mods honour, sent as X-Lich-Plugin on every request.
// Install writes the number in (lichhook.contracts.RELEASE is its one owner).
export const RELEASE = "@RELEASE@";
