"""The Windows owner and access-list check, decided on every OS from the entries Windows
reports (what ``icacls`` prints for each case is quoted beside it).

Access masks are those of winnt.h: FILE_ALL_ACCESS ``F`` = 0x1F01FF, Modify ``M`` =
0x1301BF, Read and execute ``RX`` = 0x1200A9, FILE_ADD_SUBDIRECTORY ``AD`` = 0x4. Entry
flags: OBJECT_INHERIT ``OI`` = 0x1, CONTAINER_INHERIT ``CI`` = 0x2, INHERIT_ONLY ``IO`` =
0x8, INHERITED ``I`` = 0x10. Types: ACCESS_ALLOWED = 0, ACCESS_DENIED = 1,
ACCESS_ALLOWED_OBJECT = 5.
"""

from __future__ import annotations

import sys

import pytest

from lichhook.winacl import ADMINISTRATORS, SYSTEM, acl_problem

USER = "S-1-5-21-1004336348-1177238915-682003330-1001"
OTHER = "S-1-5-21-1004336348-1177238915-682003330-1002"
EVERYONE, AUTHENTICATED, USERS = "S-1-1-0", "S-1-5-11", "S-1-5-32-545"
F, M, RX, AD = 0x1F01FF, 0x1301BF, 0x1200A9, 0x4
OI, CI, IO, I = 0x1, 0x2, 0x8, 0x10

# %LOCALAPPDATA%\lichhook\waits, inherited from the profile:
#   NT AUTHORITY\SYSTEM:(I)(OI)(CI)(F)  BUILTIN\Administrators:(I)(OI)(CI)(F)  <user>:(I)(OI)(CI)(F)
PROFILE = [(0, I | OI | CI, F, SYSTEM), (0, I | OI | CI, F, ADMINISTRATORS), (0, I | OI | CI, F, USER)]
# A folder made under C:\ (C:\shared\waits), inherited from the drive's root:
#   BUILTIN\Administrators:(I)(OI)(CI)(F)  NT AUTHORITY\SYSTEM:(I)(OI)(CI)(F)
#   BUILTIN\Users:(I)(OI)(CI)(RX)  NT AUTHORITY\Authenticated Users:(I)(M)
#   NT AUTHORITY\Authenticated Users:(I)(OI)(CI)(IO)(M)
DRIVE_ROOT_CHILD = [(0, I | OI | CI, F, ADMINISTRATORS), (0, I | OI | CI, F, SYSTEM), (0, I | OI | CI, RX, USERS),
                    (0, I, M, AUTHENTICATED), (0, I | OI | CI | IO, M, AUTHENTICATED)]


def test_a_folder_in_the_users_profile_passes():
    assert acl_problem(USER, USER, PROFILE) is None


def test_a_folder_an_elevated_run_made_passes():
    # An elevated administrator's new objects are owned by the Administrators group.
    assert acl_problem(ADMINISTRATORS, USER, PROFILE) is None


def test_a_folder_under_the_drive_root_is_open_to_every_signed_in_user():
    assert acl_problem(USER, USER, DRIVE_ROOT_CHILD) == \
        "can be changed by Authenticated Users (S-1-5-11), not only by you"


def test_another_users_folder_is_refused():
    assert acl_problem(OTHER, USER, PROFILE) == f"belongs to {OTHER}, not to you ({USER})"


@pytest.mark.parametrize("entry,who", [
    ((0, OI | CI, F, EVERYONE), "Everyone (S-1-1-0)"),                   # Everyone:(OI)(CI)(F)
    ((0, 0, AD, USERS), "Users (S-1-5-32-545)"),                         # Users:(AD): may add folders
    ((0, OI | CI | IO, M, OTHER), OTHER),                                # reaches every file made inside
    ((0, 0, 0x10000000, AUTHENTICATED), "Authenticated Users (S-1-5-11)"),  # GENERIC_ALL
])
def test_a_grant_of_change_to_anyone_else_is_refused(entry, who):
    assert acl_problem(USER, USER, PROFILE + [entry]) == f"can be changed by {who}, not only by you"


def test_reading_granted_to_others_and_denials_are_fine():
    assert acl_problem(USER, USER, PROFILE + [(0, OI | CI, RX, USERS), (1, 0, F, EVERYONE)]) is None


def test_no_access_list_at_all_is_open_to_everyone():
    assert acl_problem(USER, USER, None) == "has no access list, so every user may change it"


def test_an_entry_that_cannot_be_read_is_refused():
    assert "cannot read" in acl_problem(USER, USER, PROFILE + [(5, 0, F, "")])


@pytest.mark.skipif(sys.platform != "win32", reason="reads a real access list through advapi32")
def test_the_users_own_temporary_folder_passes_on_windows(tmp_path):
    from lichhook.winacl import folder_problem

    assert folder_problem(str(tmp_path)) is None
