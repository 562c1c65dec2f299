"""A policy's updateMode, and what each one lets rightsizer do: the webhook sizes new pods in all
but `Off`; the updater acts on running pods in `Recreate` (evicts), `InPlaceOrRecreate` (resizes,
evicts when a resize cannot be done) and `InPlace` (resizes only, never evicts, as VPA's InPlace
mode). VPA's deprecated `Auto` is read as `Recreate` (`UpdateMode.of`)."""

from __future__ import annotations

from enum import StrEnum


class UpdateMode(StrEnum):
    OFF = "Off"
    INITIAL = "Initial"
    RECREATE = "Recreate"
    IN_PLACE_OR_RECREATE = "InPlaceOrRecreate"
    IN_PLACE = "InPlace"

    @classmethod
    def of(cls, name: str) -> UpdateMode:
        """The mode a document or a row names (VPA's deprecated `Auto` is `Recreate`); a name that
        is none of them raises ValueError (documents are validated before: app.documents.policy)."""
        return cls(UPDATE_MODE_ALIASES.get(name, name))

    @property
    def sizes_new_pods(self) -> bool:
        """The webhook sets the requests of the policy's new pods."""
        return self is not UpdateMode.OFF

    @property
    def updates_running(self) -> bool:
        """The updater evicts or resizes the policy's running pods."""
        return self in (UpdateMode.RECREATE, *IN_PLACE)

    @property
    def resizes_in_place(self) -> bool:
        """The updater resizes running pods (`pods/resize`) rather than evicting them."""
        return self in IN_PLACE

    @property
    def only_in_place(self) -> bool:
        """`InPlace`: running pods are resized, never evicted (a resize that cannot be done is
        reported, and a Pending pod left alone, as VPA's InPlace mode does)."""
        return self is UpdateMode.IN_PLACE

    @property
    def may_evict(self) -> bool:
        """The updater may evict: `Recreate`, and `InPlaceOrRecreate` when a resize cannot be done
        (`InPlace` never evicts)."""
        return self in (UpdateMode.RECREATE, UpdateMode.IN_PLACE_OR_RECREATE)


IN_PLACE = (UpdateMode.IN_PLACE_OR_RECREATE, UpdateMode.IN_PLACE)
UPDATE_MODE_ALIASES = {"Auto": "Recreate"}  # VPA's deprecated Auto means Recreate
UPDATE_MODES = tuple(m.value for m in UpdateMode)  # the names a document may write, but Auto
