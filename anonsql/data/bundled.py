"""The bundled data sets (fixtures/): file, NULL markers, description, published size. Plain
data, so that the CLI lists them without importing pandas (`anonsql --help`: issue 11)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dataset:
    file: str
    na: tuple[str, ...]
    description: str
    rows: int  # the published size (fixtures/README.md), re-checked by SQL after loading
    derive: str | None = None  # sql/<derive>.sql turns the raw table into the published form
    row_id: bool = False  # add `id`, the row's number in the file, so derived rows stay traceable


DATASETS: dict[str, Dataset] = {
    "adult": Dataset("adult.csv.gz", ("?",), "UCI Adult, 32,560 rows x 15 columns, '?' as NULL", 32_560),
    "adult-test": Dataset("adult_test.csv.gz", ("?",), "UCI Adult test split, 16,281 rows (labels end in '.')", 16_281),
    "adult-kh": Dataset(
        "adult.csv.gz", ("?",),
        "Adult as in Kameya & Hayashi Sec. 4: 8 QIs, age in 5-year bins, income; "
        "rows with a missing value removed (30,161 rows); `id` is the row's number in adult.data", 30_161,
        derive="data/adult_kh", row_id=True,
    ),
    "car": Dataset("car.csv.gz", (), "UCI Car Evaluation, 1,728 rows, 6 attributes + class", 1_728),
    "breast-cancer": Dataset(
        "breast_cancer_wisconsin.csv.gz", ("?",),
        "UCI Breast Cancer Wisconsin (original), 699 rows, id + 9 attributes + class (2/4)", 699,
    ),
}
