"""The rule registry: every rule, in code order. Codes are assigned here and nowhere else.

Families: KD1xx read-key/write-key mismatch, KD2xx normalization outside the boundary,
KD3xx uniqueness on a non-canonical key, KD4xx defects inside normalizers,
KD9xx files that could not be analyzed.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple, Type

from keydrift.codes import code_matches, rule_selected  # noqa: F401 - the registry's API
from keydrift.rules._base import Rule
from keydrift.rules.kd101_key_rederived_from_result import KeyRederivedFromResult
from keydrift.rules.kd102_key_transformed_before_write import KeyTransformedBeforeWrite
from keydrift.rules.kd103_key_transformed_only_on_read import KeyTransformedOnlyOnRead
from keydrift.rules.kd104_key_transformed_differently import KeyTransformedDifferently
from keydrift.rules.kd105_lookup_differs_from_defaults import LookupDiffersFromDefaults
from keydrift.rules.kd106_key_reassigned_after_lookup import KeyReassignedAfterLookup
from keydrift.rules.kd107_key_rewritten_on_save import KeyRewrittenOnSave
from keydrift.rules.kd108_lookup_differs_from_stored_form import LookupDiffersFromStoredForm
from keydrift.rules.kd109_lookups_disagree import LookupsDisagree
from keydrift.rules.kd110_writes_disagree import WritesDisagree
from keydrift.rules.kd201_normalizer_outside_boundary import NormalizerOutsideBoundary
from keydrift.rules.kd202_adhoc_key_normalization import AdHocKeyNormalization
from keydrift.rules.kd203_divergent_normalizations import DivergentNormalizations
from keydrift.rules.kd301_unique_field_not_canonicalized import UniqueFieldNotCanonicalized
from keydrift.rules.kd302_unique_constraint_not_canonicalized import UniqueConstraintNotCanonicalized
from keydrift.rules.kd401_urlsplit_without_scheme import UrlsplitWithoutScheme
from keydrift.rules.kd402_missing_host_fallback import MissingHostFallback
from keydrift.rules.kd403_root_path_stripped import RootPathStripped
from keydrift.rules.kd404_strip_with_word import StripWithWord
from keydrift.rules.kd405_whole_url_lowercased import WholeUrlLowercased
from keydrift.rules.kd406_normalizer_not_idempotent import NormalizerNotIdempotent
from keydrift.rules.kd407_hostname_may_be_none import HostnameMayBeNone
from keydrift.rules.kd900_file_not_analyzed import FileNotAnalyzed, FileNotParsed


ALL_RULES: Tuple[Type[Rule], ...] = (
    KeyRederivedFromResult,
    KeyTransformedBeforeWrite,
    KeyTransformedOnlyOnRead,
    KeyTransformedDifferently,
    LookupDiffersFromDefaults,
    KeyReassignedAfterLookup,
    KeyRewrittenOnSave,
    LookupDiffersFromStoredForm,
    LookupsDisagree,
    WritesDisagree,
    NormalizerOutsideBoundary,
    AdHocKeyNormalization,
    DivergentNormalizations,
    UniqueFieldNotCanonicalized,
    UniqueConstraintNotCanonicalized,
    UrlsplitWithoutScheme,
    MissingHostFallback,
    RootPathStripped,
    StripWithWord,
    WholeUrlLowercased,
    NormalizerNotIdempotent,
    HostnameMayBeNone,
    FileNotParsed,
    FileNotAnalyzed,
)

# Rules that read the project-wide key registry (keydrift.projectwide) rather than one module.
REGISTRY_RULES: Tuple[Type[Rule], ...] = (LookupDiffersFromStoredForm, LookupsDisagree, WritesDisagree)

RULES_BY_CODE: Dict[str, Type[Rule]] = {rule.CODE: rule for rule in ALL_RULES}


def find_rule(code: str) -> Optional[Type[Rule]]:
    return RULES_BY_CODE.get(code.upper())


