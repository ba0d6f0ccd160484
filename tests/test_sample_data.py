"""The bundled sample (``taxpraben/data/sample``): contract, internal consistency, and golds.

Reads the files with plain ``json`` so that it checks the data itself, independently of the
loader. Every TaxCalc gold and every numeric field of TaxInspect and TaxPlan is recomputed
from the record's ``calc`` block with the implementations below, which are written apart from
the generator: progressive taxes are summed band by band here (the sample was written with
quick deductions), and every figure a rule uses must be stated in the query.
"""

from __future__ import annotations

import json
import re
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from importlib.resources import files
from typing import Any

import pytest
import yaml

TASKS = [
    "TaxRecite", "TaxSum", "TaxTopic", "TaxRead", "TaxCalc", "TaxSCQ", "TaxMCQ",
    "TaxQA", "TaxBoard", "TaxCrime", "TaxOpinion", "TaxRisk", "TaxInspect", "TaxPlan",
]  # fmt: skip
CLASSIFICATION = {"TaxTopic", "TaxSCQ", "TaxCrime"}
MIN_RECORDS = 12

#: Length bounds (characters) of generation golds.
GEN_LENGTH = {
    "TaxRecite": (80, 300),
    "TaxQA": (80, 300),
    "TaxBoard": (80, 300),
    "TaxSum": (60, 150),
    "TaxOpinion": (150, 400),
}
RISK_ASPECT_LENGTH = (40, 150)
RATIONALE_LENGTH = (50, 300)
INSPECT_CATEGORIES = ("偷税", "虚开发票", "未按规定申报", "逃避追缴欠税")
PLAN_CHOICES = ("方案一", "方案二")

SAMPLE = files("taxpraben.data") / "sample"
SPECS = files("taxpraben.tasks") / "specs"

CENT = Decimal("0.01")


def q2(x: Decimal) -> Decimal:
    return x.quantize(CENT, rounding=ROUND_HALF_UP)


def dec(x: Any) -> Decimal:
    assert isinstance(x, (int, float, str)) and not isinstance(x, bool), x
    return Decimal(str(x))


# ---------------------------------------------------------------------------------- loading


@cache
def load(task: str) -> list[dict]:
    path = SAMPLE / f"{task}.jsonl"
    records = []
    with path.open("r", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            assert line.strip(), f"{task}.jsonl line {lineno} is blank"
            rec = json.loads(line)
            assert isinstance(rec, dict), f"{task}.jsonl line {lineno} is not an object"
            records.append(rec)
    return records


@cache
def spec(task: str) -> dict:
    return yaml.safe_load((SPECS / f"{task}.yaml").read_text(encoding="utf-8"))


def spec_fields(task: str) -> list[dict]:
    return spec(task)["fields"]["fields"]


def _safe_load(task: str) -> list[dict]:
    try:
        return load(task)
    except Exception:  # reported by test_file_parses
        return []


def record_params(*tasks: str) -> list:
    return [
        pytest.param(task, rec, id=f"{task}-{rec.get('id')}")
        for task in tasks
        for rec in _safe_load(task)
    ]


# ------------------------------------------------------------- rules, written band by band

IIT_ANNUAL = [
    (36000, 3),
    (144000, 10),
    (300000, 20),
    (420000, 25),
    (660000, 30),
    (960000, 35),
    (None, 45),
]
BUSINESS = [(30000, 5), (90000, 10), (300000, 20), (500000, 30), (None, 35)]
LABOUR_WITHHOLDING = [(20000, 20), (50000, 30), (None, 40)]
URBAN_RATES = {Decimal("0.07"), Decimal("0.05"), Decimal("0.01")}
EDUCATION_SURCHARGES = Decimal("0.03") + Decimal("0.02")


def progressive(amount: Decimal, bands: list[tuple[Any, int]]) -> Decimal:
    """Tax on ``amount`` summed band by band (upper bounds, percentage rates)."""
    tax, lower = Decimal(0), Decimal(0)
    for upper, pct in bands:
        if amount <= lower:
            break
        top = amount if upper is None else min(amount, Decimal(upper))
        tax += (top - lower) * pct / 100
        if upper is None:
            break
        lower = Decimal(upper)
    return tax


def _get(inputs: dict, key: str, default: int | None = None) -> Decimal:
    if key not in inputs:
        assert default is not None, f"input {key!r} missing"
        return Decimal(default)
    return dec(inputs[key])


def rule_value(rule: str, inputs: dict) -> Decimal:
    """The exact (unrounded) result of one named rule."""
    g = lambda key, default=None: _get(inputs, key, default)  # noqa: E731
    if rule in ("vat_general_payable", "vat_output_from_incl"):
        rate = g("rate")
        assert rate in {Decimal("0.13"), Decimal("0.09"), Decimal("0.06")}, rate
        output = g("price_incl_tax") * rate / (1 + rate)
        return output - g("input_tax", 0) if rule == "vat_general_payable" else output
    if rule == "vat_small_scale":
        rate = g("rate")
        assert rate in {Decimal("0.01"), Decimal("0.03")}, rate
        return g("sales_incl_tax") * rate / (1 + rate)
    if rule == "proportional":
        return g("base") * g("rate")
    if rule == "iit_annual_comprehensive":
        income = (
            g("wages", 0)
            + g("labour", 0) * Decimal("0.8")
            + g("royalties", 0) * Decimal("0.8")
            + g("author", 0) * Decimal("0.8") * Decimal("0.7")
        )
        assert g("basic_deduction") == 60000
        taxable = income - g("basic_deduction") - g("special_deductions", 0)
        taxable -= g("additional_deductions", 0) + g("other_deductions", 0)
        return progressive(max(taxable, Decimal(0)), IIT_ANNUAL)
    if rule == "iit_labour_withholding":
        receipt = g("receipt")
        expense = Decimal(800) if receipt <= 4000 else receipt / 5
        return progressive(receipt - expense, LABOUR_WITHHOLDING)
    if rule == "cit_small_low_profit":
        income = g("taxable_income")
        assert 0 <= income <= 3_000_000, "over the small low-profit threshold"
        return income / 4 * Decimal("0.20")
    if rule == "cit_standard":
        profit, donation = g("total_profit"), g("donation", 0)
        rate = g("rate")
        assert rate in {Decimal("0.25"), Decimal("0.15")}, rate
        deductible = min(donation, profit * 12 / 100)
        taxable = profit + donation - deductible + g("other_adjustments", 0)
        return taxable * rate
    if rule == "stamp_duty":
        contracts = inputs.get("contracts", [inputs])
        return sum(
            (dec(c["amount"]) * dec(c["rate_permille"]) / 1000 for c in contracts), Decimal(0)
        )
    if rule == "land_vat":
        deductible = g("deductible")
        gain = g("proceeds") - deductible
        bands = [(deductible / 2, 30), (deductible, 40), (deductible * 2, 50), (None, 60)]
        return progressive(gain, bands)
    if rule == "late_payment_surcharge":
        return g("unpaid_tax") * g("days") * 5 / 10000
    if rule == "urban_surcharges":
        city = g("city_rate")
        assert city in URBAN_RATES, city
        return (g("vat", 0) + g("consumption_tax", 0)) * (city + EDUCATION_SURCHARGES)
    if rule == "property_tax_original_value":
        assert Decimal("0.1") <= g("deduction_rate") <= Decimal("0.3")
        residual = g("original_value") * (1 - g("deduction_rate"))
        return residual * Decimal("0.012") * g("months", 12) / 12
    if rule == "property_tax_rent":
        return g("annual_rent") * 12 / 100
    if rule == "business_income_iit":
        taxable = g("revenue") - g("costs") - g("basic_deduction", 0)
        taxable -= g("special_deductions", 0) + g("other_deductions", 0)
        return progressive(max(taxable, Decimal(0)), BUSINESS)
    if rule == "given":
        return g("amount")
    raise AssertionError(f"unknown calc rule {rule!r}")


def rule_gold(rule: str, inputs: dict) -> Decimal:
    return q2(rule_value(rule, inputs))


def components_total(components: list[dict]) -> Decimal:
    """Sum of the components, each rounded to the cent as a tax bill would be."""
    return sum((rule_gold(c["rule"], c["inputs"]) for c in components), Decimal(0))


def inspection(inputs: dict) -> dict[str, Decimal]:
    unpaid = q2(components_total(inputs.get("components", [])) - dec(inputs.get("already_paid", 0)))
    assert unpaid >= 0
    surcharge = q2(unpaid * dec(inputs.get("days", 0)) * Decimal("0.0005"))
    if "fine_fixed" in inputs:
        fine = q2(dec(inputs["fine_fixed"]))
    else:
        multiple = dec(inputs["fine_multiple"])
        assert Decimal("0.5") <= multiple <= 5, "art. 63: 50% to 5 times the unpaid tax"
        fine = q2(unpaid * multiple)
    return {"少缴税款": unpaid, "滞纳金": surcharge, "罚款": fine}


# ------------------------------------------------- the figures a rule uses must be in the query


def plain(d: Decimal) -> str:
    s = format(d.normalize(), "f")
    return s


def grouped(number: str) -> str:
    """``"1130000.50"`` -> ``"1,130,000.50"`` (the digits after the point kept as given)."""
    whole, dot, frac = number.partition(".")
    sign = "-" if whole.startswith("-") else ""
    return f"{sign}{int(whole.lstrip('-')):,}{dot}{frac}"


def renderings(key: str, value: Any) -> set[str]:
    """How the query may write ``value`` of input ``key``."""
    d = dec(value)
    if key.endswith("rate"):
        return {plain(d * 100) + "%"}
    if key.endswith("permille"):
        return {plain(d) + "‰"}
    if key == "fine_multiple":
        return {plain(d) + "倍"}
    if key == "days":
        return {plain(d) + "天"}
    if key == "months":
        return {plain(d) + "个月"}
    cents = format(q2(d), "f")
    out = {plain(d), grouped(plain(d)), cents, grouped(cents)}
    if abs(d) >= 10000 and d % 100 == 0:
        out.add(plain(d / 10000) + "万")
    return out


def stated(query: str, forms: set[str]) -> bool:
    return any(re.search(rf"(?<![\d.,]){re.escape(form)}(?![\d]|[.,]\d)", query) for form in forms)


def leaf_inputs(node: Any, key: str = "") -> list[tuple[str, Any]]:
    """Every (input name, number) in a calc block, nested components included."""
    if isinstance(node, dict):
        out = []
        for k, v in node.items():
            if k == "rule":
                continue
            out += leaf_inputs(v, key if k == "inputs" or k in PLAN_CHOICES else k)
        return out
    if isinstance(node, list):
        return [leaf for item in node for leaf in leaf_inputs(item, key)]
    assert isinstance(node, (int, float)) and not isinstance(node, bool), (key, node)
    return [(key, node)]


def assert_inputs_stated(rec: dict) -> None:
    missing = [
        f"{key}={value}"
        for key, value in leaf_inputs(rec["calc"]["inputs"])
        if not stated(rec["query"], renderings(key, value))
    ]
    assert not missing, f"inputs not written in the query: {missing}"


def assert_money(value: Any, what: str) -> Decimal:
    assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{what}: {value!r}"
    d = dec(value)
    assert d.as_tuple().exponent >= -2, f"{what} has more than two decimals: {value}"
    return d


# ------------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("task", TASKS)
def test_file_parses(task):
    assert (SAMPLE / f"{task}.jsonl").is_file(), f"missing sample file {task}.jsonl"
    records = load(task)
    assert len(records) >= MIN_RECORDS, f"{task}: {len(records)} records"
    ids = [r.get("id") for r in records]
    assert all(isinstance(i, str) for i in ids), ids
    assert ids == [str(n) for n in range(1, len(records) + 1)], ids
    assert len(set(ids)) == len(ids)
    assert len({r["query"] for r in records}) == len(records), "duplicate queries"


def test_sample_has_exactly_the_fourteen_datasets():
    names = sorted(p.name for p in SAMPLE.iterdir() if p.name.endswith(".jsonl"))
    assert names == sorted(f"{t}.jsonl" for t in TASKS)


def test_files_are_plain_utf8_json_lines():
    for task in TASKS:
        raw = (SAMPLE / f"{task}.jsonl").read_bytes()
        assert not raw.startswith(b"\xef\xbb\xbf"), task
        assert b"\r" not in raw, task
        assert raw.endswith(b"\n"), task
        assert "\\u" not in raw.decode("utf-8"), f"{task}: written with ensure_ascii"


@pytest.mark.parametrize(("task", "rec"), record_params(*TASKS))
def test_record_contract(task, rec):
    assert isinstance(rec["query"], str) and len(rec["query"]) >= 20
    assert re.search(r"[\u4e00-\u9fff]", rec["query"]), "query is not Chinese"
    assert "answer" in rec and rec["answer"] not in (None, "", [], {})
    if "text" in rec:
        assert isinstance(rec["text"], str) and rec["text"]
        assert rec["text"] in rec["query"], "text is not part of the query"
    if task in CLASSIFICATION:
        choices, gold = rec["choices"], rec["gold"]
        assert isinstance(choices, list) and all(isinstance(c, str) and c for c in choices)
        assert len(set(choices)) == len(choices)
        assert isinstance(gold, int) and not isinstance(gold, bool)
        assert 0 <= gold < len(choices)
        assert rec["answer"] == choices[gold]
    else:
        assert "choices" not in rec and "gold" not in rec


@pytest.mark.parametrize("task", ["TaxTopic", "TaxCrime"])
def test_label_set_is_fixed_and_listed(task):
    records = load(task)
    labels = records[0]["choices"]
    for rec in records:
        assert rec["choices"] == labels, rec["id"]
        for label in labels:
            assert label in rec["query"], (rec["id"], label)
    assert len({rec["gold"] for rec in records}) >= 6, "too few distinct golds"


def test_topic_has_hard_cases():
    records = load("TaxTopic")
    labels = records[0]["choices"]
    nested = {(a, b) for a in labels for b in labels if a != b and a in b}
    assert nested, "expected a label that is a substring of another"
    # the gold label contains another label that the text also names (土地增值税 / 增值税)
    substring = [
        r for r in records
        if any(r["answer"] == outer and inner in r["text"] for inner, outer in nested)
    ]  # fmt: skip
    assert len(substring) >= 2
    # the text names some other label that is not the gold
    distractor = [
        r for r in records
        if any(lab != r["answer"] and lab in r["text"].replace(r["answer"], "") for lab in labels)
    ]  # fmt: skip
    assert len(distractor) >= 5


@pytest.mark.parametrize(("task", "rec"), record_params("TaxSCQ"))
def test_scq_options_are_lettered_in_query(task, rec):
    assert len(rec["choices"]) == 4
    for letter, choice in zip("ABCD", rec["choices"], strict=True):
        assert f"{letter}. {choice}" in rec["query"]


def test_scq_gold_letters_vary():
    assert {r["gold"] for r in load("TaxSCQ")} == {0, 1, 2, 3}


@pytest.mark.parametrize(("task", "rec"), record_params("TaxMCQ"))
def test_mcq_answer_is_a_sorted_letter_set(task, rec):
    answer = rec["answer"]
    assert isinstance(answer, str) and re.fullmatch(r"[A-E]{2,5}", answer), answer
    assert list(answer) == sorted(set(answer)), "letters must be sorted and distinct"
    for letter in "ABCDE":
        assert f"\n{letter}. " in rec["query"], letter


def test_mcq_answer_sizes_vary():
    sizes = {len(r["answer"]) for r in load("TaxMCQ")}
    assert {2, 3, 4} <= sizes


@pytest.mark.parametrize(("task", "rec"), record_params("TaxRead"))
def test_read_answer_is_a_span_of_the_text(task, rec):
    assert isinstance(rec["answer"], str) and 0 < len(rec["answer"]) <= 20
    assert rec["answer"] in rec["text"]


@pytest.mark.parametrize(("task", "rec"), record_params(*GEN_LENGTH))
def test_generation_gold_length(task, rec):
    lo, hi = GEN_LENGTH[task]
    assert isinstance(rec["answer"], str)
    assert lo <= len(rec["answer"]) <= hi, len(rec["answer"])


@pytest.mark.parametrize(("task", "rec"), record_params("TaxRisk", "TaxInspect", "TaxPlan"))
def test_json_gold_has_exactly_the_spec_fields(task, rec):
    names = [f["name"] for f in spec_fields(task)]
    assert isinstance(rec["answer"], dict)
    assert list(rec["answer"]) == names
    for name in names:
        assert f'"{name}"' in rec["query"], f"template field {name} not in the query"
    assert "JSON" in rec["query"]
    for field in spec_fields(task):
        value = rec["answer"][field["name"]]
        if field["kind"] == "number":
            assert_money(value, field["name"])
        else:
            assert isinstance(value, str) and value, field["name"]
        if field["kind"] == "text":
            lo, hi = RISK_ASPECT_LENGTH if task == "TaxRisk" else RATIONALE_LENGTH
            assert lo <= len(value) <= hi, (field["name"], len(value))


@pytest.mark.parametrize(("task", "rec"), record_params("TaxCalc"))
def test_calc_gold_recomputes(task, rec):
    calc = rec["calc"]
    expected = rule_gold(calc["rule"], calc["inputs"])
    got = assert_money(rec["answer"], "answer")
    assert got == expected, f"gold {got} != recomputed {expected} ({calc['rule']})"
    assert_inputs_stated(rec)


def test_calc_covers_the_rules():
    rules = {r["calc"]["rule"] for r in load("TaxCalc")}
    assert len(rules) >= 12, sorted(rules)


@pytest.mark.parametrize(("task", "rec"), record_params("TaxInspect"))
def test_inspect_fields_recompute(task, rec):
    assert rec["calc"]["rule"] == "inspection"
    expected = inspection(rec["calc"]["inputs"])
    answer = rec["answer"]
    for name, value in expected.items():
        assert assert_money(answer[name], name) == value, (name, answer[name], value)
    assert answer["违法性质"] in INSPECT_CATEGORIES
    for category in INSPECT_CATEGORIES:
        assert category in rec["query"]
    assert_inputs_stated(rec)


@pytest.mark.parametrize(("task", "rec"), record_params("TaxPlan"))
def test_plan_fields_recompute(task, rec):
    assert rec["calc"]["rule"] == "plan_compare"
    plans = rec["calc"]["inputs"]
    assert sorted(plans) == sorted(PLAN_CHOICES)
    burden_1 = components_total(plans["方案一"])
    burden_2 = components_total(plans["方案二"])
    answer = rec["answer"]
    assert assert_money(answer["方案一税负"], "方案一税负") == burden_1
    assert assert_money(answer["方案二税负"], "方案二税负") == burden_2
    assert burden_1 != burden_2, "a plan case needs a strictly better plan"
    assert answer["推荐方案"] == ("方案一" if burden_1 < burden_2 else "方案二")
    assert assert_money(answer["节税金额"], "节税金额") == abs(burden_1 - burden_2)
    assert_inputs_stated(rec)


def test_plan_recommendations_are_balanced():
    picks = [r["answer"]["推荐方案"] for r in load("TaxPlan")]
    assert set(picks) == set(PLAN_CHOICES)


# ------------------------------------------------- the checking rules against known figures


@pytest.mark.parametrize(
    ("rule", "inputs", "expected"),
    [
        # quick-deduction form of the annual table: 93,600 x 10% - 2,520
        ("iit_annual_comprehensive", {"wages": 153600, "basic_deduction": 60000}, "6840.00"),
        # every band boundary agrees with the quick deductions of TAX_FACTS.md
        ("iit_annual_comprehensive", {"wages": 1020000, "basic_deduction": 60000}, "250080.00"),
        ("iit_labour_withholding", {"receipt": 3500}, "540.00"),
        ("iit_labour_withholding", {"receipt": 30000}, "5200.00"),
        ("business_income_iit", {"revenue": 400000, "costs": 0}, "79500.00"),
        ("land_vat", {"proceeds": 50000000, "deductible": 30000000}, "6500000.00"),
        ("land_vat", {"proceeds": 40000000, "deductible": 20000000}, "7000000.00"),
        ("vat_general_payable", {"price_incl_tax": 113, "rate": 0.13, "input_tax": 3}, "10.00"),
        ("cit_standard", {"total_profit": 1000000, "donation": 150000, "rate": 0.25}, "257500.00"),
        ("late_payment_surcharge", {"unpaid_tax": 10000, "days": 10}, "50.00"),
    ],
)
def test_checking_rules_on_known_figures(rule, inputs, expected):
    assert rule_gold(rule, inputs) == Decimal(expected)


@pytest.mark.parametrize(
    ("bands", "quick"),
    [
        (IIT_ANNUAL, [0, 2520, 16920, 31920, 52920, 85920, 181920]),
        (BUSINESS, [0, 1500, 10500, 40500, 65500]),
        (LABOUR_WITHHOLDING, [0, 2000, 7000]),
    ],
)
def test_bands_match_quick_deductions(bands, quick):
    # just above each band's lower bound, rate x amount - quick deduction = band-by-band sum
    lower = Decimal(0)
    for (upper, pct), qd in zip(bands, quick, strict=True):
        x = lower + 1000
        assert progressive(x, bands) == x * pct / 100 - qd
        lower = Decimal(upper) if upper is not None else lower


def test_renderings_and_boundaries():
    assert renderings("amount", 1130000) >= {"1130000", "1,130,000", "113万"}
    assert renderings("rate", 0.13) == {"13%"}
    assert stated("含税销售额1,130,000元", renderings("amount", 1130000))
    assert not stated("税率113%", renderings("rate", 0.13))
    assert not stated("金额21,130,000元", renderings("amount", 1130000))
    assert stated("进项税额12,350.40元", renderings("input_tax", 12350.4))
