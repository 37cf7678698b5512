"""Windows: whether a folder is the user's own and closed to other users, read from its
owner and its access list (on POSIX the owner and the mode bits say the same).

``acl_problem`` decides, as a pure function of the owner, the user and the access entries,
so that it is tested on every OS. ``folder_problem`` reads those from Windows through
advapi32 (GetNamedSecurityInfoW, GetAce, ConvertSidToStringSidW) and asks it.

Trusted besides the user: SYSTEM, the Administrators group and TrustedInstaller (who can
change anything on the machine anyway), and the placeholders CREATOR OWNER and OWNER
RIGHTS, which stand for the owner, that is the user. Entries that deny are ignored: a
folder some entry opens to others is refused even if another entry might close it again.
"""

from __future__ import annotations

import sys

SYSTEM = "S-1-5-18"
ADMINISTRATORS = "S-1-5-32-544"
TRUSTED_INSTALLER = "S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464"
CREATOR_OWNER = "S-1-3-0"
OWNER_RIGHTS = "S-1-3-4"
TRUSTED_OWNERS = frozenset([SYSTEM, ADMINISTRATORS, TRUSTED_INSTALLER])
TRUSTED = TRUSTED_OWNERS | {CREATOR_OWNER, OWNER_RIGHTS}

WELL_KNOWN = {
    "S-1-1-0": "Everyone",
    "S-1-5-11": "Authenticated Users",
    "S-1-5-32-545": "Users",
    "S-1-5-4": "INTERACTIVE",
    "S-1-5-7": "ANONYMOUS LOGON",
    "S-1-5-32-546": "Guests",
}

# Access entry types that grant (winnt.h): ACCESS_ALLOWED_ACE_TYPE and the callback form,
# both laid out as header, mask, SID. The object forms (5, 11) carry GUIDs first and do not
# occur on files; one that does is treated as granting everything.
ALLOWED_TYPES = (0x0, 0x9)
OBJECT_ALLOWED_TYPES = (0x5, 0xB)
INHERIT_ONLY = 0x08  # the entry applies to what is created inside, not to the folder itself

# Rights that let someone change what is in the folder: add a file or a folder
# (FILE_ADD_FILE / FILE_WRITE_DATA 0x2, FILE_ADD_SUBDIRECTORY / FILE_APPEND_DATA 0x4),
# delete an entry (FILE_DELETE_CHILD 0x40, DELETE), change who may (WRITE_DAC,
# WRITE_OWNER), or all of it (GENERIC_WRITE, GENERIC_ALL). Inherited by the files inside,
# the first two let someone rewrite them.
WRITE_RIGHTS = 0x2 | 0x4 | 0x40 | 0x10000 | 0x40000 | 0x80000 | 0x10000000 | 0x40000000


def _who(sid: str) -> str:
    return f"{WELL_KNOWN[sid]} ({sid})" if sid in WELL_KNOWN else sid


def acl_problem(owner: str, user: str, aces: list | None) -> str | None:
    """What makes the folder unsafe, as words following its path, or None.

    ``aces`` is a list of ``(type, flags, mask, sid)``, inherit-only entries included
    (they reach the files lichhook creates there), or None for a folder with no access
    list at all, which Windows reads as open to everyone.
    """
    if owner != user and owner not in TRUSTED_OWNERS:
        return f"belongs to {_who(owner)}, not to you ({user})"
    if aces is None:
        return "has no access list, so every user may change it"
    for ace_type, _flags, mask, sid in aces:
        if ace_type in OBJECT_ALLOWED_TYPES:
            return "has an access entry lichhook cannot read, which may let other users change it"
        if ace_type in ALLOWED_TYPES and mask & WRITE_RIGHTS and sid != user and sid not in TRUSTED:
            return f"can be changed by {_who(sid)}, not only by you"
    return None


# Only Windows has these calls; defined there alone, so every other OS (and the type
# checker reading as one) never meets them.
if sys.platform == "win32":

    def folder_problem(path: str) -> str | None:
        """What makes the folder at ``path`` unsafe to keep lichhook's records in, or None (Windows only)."""
        import ctypes
        from ctypes import wintypes

        advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)
        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        advapi32.GetNamedSecurityInfoW.argtypes = [
            wintypes.LPCWSTR, ctypes.c_int, wintypes.DWORD, ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p),
            ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p)]
        advapi32.GetNamedSecurityInfoW.restype = wintypes.DWORD
        advapi32.ConvertSidToStringSidW.argtypes = [ctypes.c_void_p, ctypes.POINTER(wintypes.LPWSTR)]
        advapi32.GetAce.argtypes = [ctypes.c_void_p, wintypes.DWORD, ctypes.POINTER(ctypes.c_void_p)]
        advapi32.OpenProcessToken.argtypes = [wintypes.HANDLE, wintypes.DWORD, ctypes.POINTER(wintypes.HANDLE)]
        advapi32.GetTokenInformation.argtypes = [wintypes.HANDLE, ctypes.c_int, ctypes.c_void_p,
                                                 wintypes.DWORD, ctypes.POINTER(wintypes.DWORD)]
        kernel32.GetCurrentProcess.restype = wintypes.HANDLE
        kernel32.LocalFree.argtypes = [ctypes.c_void_p]
        kernel32.CloseHandle.argtypes = [wintypes.HANDLE]

        def sid_string(sid: int) -> str:
            text = wintypes.LPWSTR()
            if not advapi32.ConvertSidToStringSidW(sid, ctypes.byref(text)):
                raise ctypes.WinError(ctypes.get_last_error())
            try:
                return text.value or ""
            finally:
                kernel32.LocalFree(ctypes.cast(text, ctypes.c_void_p))

        owner, dacl, descriptor = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION, DACL_SECURITY_INFORMATION = 1, 0x1, 0x4
        error = advapi32.GetNamedSecurityInfoW(path, SE_FILE_OBJECT, OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION,
                                               ctypes.byref(owner), None, ctypes.byref(dacl), None,
                                               ctypes.byref(descriptor))
        if error:
            return f"cannot be checked for its owner and access list (Windows error {error})"
        try:
            aces = None
            if dacl.value:
                count = ctypes.c_ushort.from_address(dacl.value + 4).value  # ACL: rev, sbz1, size, AceCount
                aces = []
                for index in range(count):
                    ace = ctypes.c_void_p()
                    if not advapi32.GetAce(dacl, index, ctypes.byref(ace)):
                        raise ctypes.WinError(ctypes.get_last_error())
                    ace_type = ctypes.c_ubyte.from_address(ace.value).value  # ACE_HEADER.AceType
                    flags = ctypes.c_ubyte.from_address(ace.value + 1).value  # ACE_HEADER.AceFlags
                    mask = ctypes.c_uint32.from_address(ace.value + 4).value  # after the 4-byte header
                    sid = sid_string(ace.value + 8) if ace_type in ALLOWED_TYPES else ""
                    aces.append((ace_type, flags, mask, sid))
            return acl_problem(sid_string(owner.value), _current_user(advapi32, kernel32, sid_string), aces)
        finally:
            kernel32.LocalFree(descriptor)


    def _current_user(advapi32, kernel32, sid_string) -> str:  # type: ignore[no-untyped-def]
        """The SID of the user this process runs as, from its token (TOKEN_USER)."""
        import ctypes
        from ctypes import wintypes

        TOKEN_QUERY, TOKEN_USER_CLASS = 0x8, 1
        token = wintypes.HANDLE()
        if not advapi32.OpenProcessToken(kernel32.GetCurrentProcess(), TOKEN_QUERY, ctypes.byref(token)):
            raise ctypes.WinError(ctypes.get_last_error())
        try:
            size = wintypes.DWORD()
            advapi32.GetTokenInformation(token, TOKEN_USER_CLASS, None, 0, ctypes.byref(size))
            buffer = ctypes.create_string_buffer(size.value)
            if not advapi32.GetTokenInformation(token, TOKEN_USER_CLASS, buffer, size, ctypes.byref(size)):
                raise ctypes.WinError(ctypes.get_last_error())
            return sid_string(ctypes.c_void_p.from_buffer(buffer).value)  # TOKEN_USER.User.Sid
        finally:
            kernel32.CloseHandle(token)
