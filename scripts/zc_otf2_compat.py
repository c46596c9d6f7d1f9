# SPDX-License-Identifier: MIT
"""Workarounds for Debian's python3-otf2 3.0.2, shared by zecoll's Python tools.

Import before reading an archive: `from zc_otf2_compat import patch_intercomm_reading` and call
it once. zecoll writes intercommunicators as OTF2 3.0 InterComm definitions (readers in C,
otf2-print and Vampir handle them)."""


def patch_intercomm_reading():
    """python3-otf2 3.0.2 cannot read InterComm definitions: InterComm inherits Comm's fields and
    adds its own, so the reader maps groupB onto `parent` and aborts with a KeyError (verified).
    Replace its constructor with one that takes the record's real fields (name, groupA, groupB,
    commonCommunicator, flags). Returns a note when the patch was applied."""
    try:
        from otf2 import definitions as D
    except ImportError:
        return None
    ic = getattr(D, "InterComm", None)
    if ic is None or getattr(ic, "_zc_patched", False):
        return None
    if [f.name for f in ic._fields].count("parent") < 2:
        return None  # a fixed binding

    def _construct(cls, registry, ref_, name, group_a, group_b, common, flags):
        obj = cls.__new__(cls)
        obj._registry = registry._registry_for_type(cls)
        obj._ref = ref_
        obj._name = registry.strings[name]
        obj._group = None
        obj._groupA = registry.groups[group_a]
        obj._groupB = registry.groups[group_b]
        try:
            obj._parent = registry.comms[common]
        except KeyError:
            obj._parent = None
        obj._flags = flags
        return obj

    ic._construct = classmethod(_construct)
    ic._zc_patched = True
    return "python3-otf2's InterComm reader patched (the 3.0.2 binding cannot read InterComm definitions)"
