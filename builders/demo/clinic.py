"""``clinic``: a small MIMIC-like hospital database.

Patients, their hospital admissions, ICU stays, coded diagnoses, prescriptions and lab
results, with the two dictionary tables (ICD codes, lab items) that MIMIC keeps apart.
Values follow plausible clinical distributions: ages skew old, lengths of stay are
log-normal, lab values fall mostly in each test's normal range with some flagged
abnormal. Every date of a row lies inside its admission. MIMIC holds no names or
addresses, so this database draws everything from seeded ``random.Random`` generators.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import NamedTuple

from answerable.builders.demo.draw import (
    day_between,
    iso_date,
    iso_datetime,
    lognormal,
    pick,
    pick_many,
    poisson,
    table_rng,
)
from answerable.builders.demo.writer import TableRows

PATIENT_COUNT = 750
FIRST_DAY = date(2018, 1, 1)
LAST_DAY = date(2023, 12, 31)
LAST_DEATH_DAY = date(2024, 6, 30)

DDL = """
CREATE TABLE patients (
    subject_id INTEGER PRIMARY KEY,
    gender TEXT NOT NULL,
    date_of_birth TEXT NOT NULL,
    date_of_death TEXT,
    ethnicity TEXT NOT NULL,
    insurance TEXT NOT NULL
);
CREATE TABLE admissions (
    hadm_id INTEGER PRIMARY KEY,
    subject_id INTEGER NOT NULL,
    admit_time TEXT NOT NULL,
    discharge_time TEXT NOT NULL,
    admission_type TEXT NOT NULL,
    admission_location TEXT NOT NULL,
    discharge_location TEXT NOT NULL,
    language TEXT,
    marital_status TEXT,
    FOREIGN KEY (subject_id) REFERENCES patients (subject_id)
);
CREATE TABLE icu_stays (
    stay_id INTEGER PRIMARY KEY,
    subject_id INTEGER NOT NULL,
    hadm_id INTEGER NOT NULL,
    first_careunit TEXT NOT NULL,
    last_careunit TEXT NOT NULL,
    in_time TEXT NOT NULL,
    out_time TEXT NOT NULL,
    length_of_stay REAL NOT NULL,
    FOREIGN KEY (subject_id) REFERENCES patients (subject_id),
    FOREIGN KEY (hadm_id) REFERENCES admissions (hadm_id)
);
CREATE TABLE d_icd_diagnoses (
    icd_code TEXT PRIMARY KEY,
    short_title TEXT NOT NULL,
    long_title TEXT NOT NULL
);
CREATE TABLE diagnoses (
    subject_id INTEGER NOT NULL,
    hadm_id INTEGER NOT NULL,
    seq_num INTEGER NOT NULL,
    icd_code TEXT NOT NULL,
    PRIMARY KEY (hadm_id, seq_num),
    FOREIGN KEY (subject_id) REFERENCES patients (subject_id),
    FOREIGN KEY (hadm_id) REFERENCES admissions (hadm_id),
    FOREIGN KEY (icd_code) REFERENCES d_icd_diagnoses (icd_code)
);
CREATE TABLE prescriptions (
    prescription_id INTEGER PRIMARY KEY,
    subject_id INTEGER NOT NULL,
    hadm_id INTEGER NOT NULL,
    drug TEXT NOT NULL,
    dose_value REAL NOT NULL,
    dose_unit TEXT NOT NULL,
    route TEXT NOT NULL,
    start_date TEXT NOT NULL,
    stop_date TEXT NOT NULL,
    FOREIGN KEY (subject_id) REFERENCES patients (subject_id),
    FOREIGN KEY (hadm_id) REFERENCES admissions (hadm_id)
);
CREATE TABLE d_lab_items (
    item_id INTEGER PRIMARY KEY,
    label TEXT NOT NULL,
    fluid TEXT NOT NULL,
    category TEXT NOT NULL,
    unit TEXT,
    normal_low REAL NOT NULL,
    normal_high REAL NOT NULL
);
CREATE TABLE lab_events (
    lab_event_id INTEGER PRIMARY KEY,
    subject_id INTEGER NOT NULL,
    hadm_id INTEGER NOT NULL,
    item_id INTEGER NOT NULL,
    chart_time TEXT NOT NULL,
    value REAL,
    unit TEXT,
    flag TEXT,
    FOREIGN KEY (subject_id) REFERENCES patients (subject_id),
    FOREIGN KEY (hadm_id) REFERENCES admissions (hadm_id),
    FOREIGN KEY (item_id) REFERENCES d_lab_items (item_id)
)
"""

# (code, short title, long title, relative frequency), after MIMIC-III's most common codes.
ICD_CODES = (
    ("4019", "Hypertension NOS", "Unspecified essential hypertension", 20),
    ("4280", "CHF NOS", "Congestive heart failure, unspecified", 13),
    ("42731", "Atrial fibrillation", "Atrial fibrillation", 13),
    ("41401", "Crnry athrscl natve vssl", "Coronary atherosclerosis of native coronary artery", 12),
    ("5849", "Acute kidney failure NOS", "Acute kidney failure, unspecified", 9),
    (
        "25000",
        "DMII wo cmp nt st uncntr",
        "Diabetes mellitus without mention of complication, type II or unspecified type, "
        "not stated as uncontrolled",
        9,
    ),
    ("2724", "Hyperlipidemia NEC/NOS", "Other and unspecified hyperlipidemia", 8),
    ("51881", "Acute respiratry failure", "Acute respiratory failure", 7),
    ("5990", "Urin tract infection NOS", "Urinary tract infection, site not specified", 6),
    ("53081", "Esophageal reflux", "Esophageal reflux", 6),
    ("2720", "Pure hypercholesterolem", "Pure hypercholesterolemia", 5),
    ("2859", "Anemia NOS", "Anemia, unspecified", 5),
    ("2449", "Hypothyroidism NOS", "Unspecified acquired hypothyroidism", 5),
    ("486", "Pneumonia, organism NOS", "Pneumonia, organism unspecified", 5),
    ("0389", "Septicemia NOS", "Unspecified septicemia", 4),
    ("99592", "Severe sepsis", "Severe sepsis", 4),
    ("496", "Chr airway obstruct NEC", "Chronic airway obstruction, not elsewhere classified", 4),
    ("5070", "Food/vomit pneumonitis", "Pneumonitis due to inhalation of food or vomitus", 3),
    ("311", "Depressive disorder NEC", "Depressive disorder, not elsewhere classified", 4),
    ("5859", "Chronic kidney dis NOS", "Chronic kidney disease, unspecified", 4),
    ("2762", "Acidosis", "Acidosis", 3),
    ("2761", "Hyposmolality", "Hyposmolality and/or hyponatremia", 3),
    ("3051", "Tobacco use disorder", "Tobacco use disorder", 4),
    ("V5861", "Long-term use anticoagul", "Long-term (current) use of anticoagulants", 4),
    ("4241", "Aortic valve disorder", "Aortic valve disorders", 3),
    ("41071", "Subendo infarct, initial", "Subendocardial infarction, initial episode of care", 3),
    ("V4581", "Aortocoronary bypass", "Aortocoronary bypass status", 3),
    ("78552", "Septic shock", "Septic shock", 2),
    ("2875", "Thrombocytopenia NOS", "Thrombocytopenia, unspecified", 3),
    ("2851", "Ac posthemorrhag anemia", "Acute posthemorrhagic anemia", 3),
    ("32723", "Obstructive sleep apnea", "Obstructive sleep apnea (adult)(pediatric)", 2),
    (
        "E8788",
        "Abn react-surg proc NEC",
        "Other specified surgical operations and procedures causing abnormal patient reaction, "
        "or later complication, without mention of misadventure at time of operation",
        2,
    ),
)


class Drug(NamedTuple):
    """A drug as ordered: the usual doses, their unit, the routes and how often it is seen."""

    name: str
    doses: tuple[float, ...]
    unit: str
    routes: tuple[str, ...]
    weight: float


DRUGS = (
    Drug("Heparin", (5000.0,), "UNIT", ("SC",), 12),
    Drug("Sodium Chloride 0.9%", (500.0, 1000.0), "mL", ("IV",), 11),
    Drug("Acetaminophen", (325.0, 650.0, 1000.0), "mg", ("PO",), 10),
    Drug("Insulin Lispro", (2.0, 4.0, 6.0, 8.0), "UNIT", ("SC",), 9),
    Drug("Docusate Sodium", (100.0,), "mg", ("PO",), 9),
    Drug("Potassium Chloride", (20.0, 40.0), "mEq", ("PO", "IV"), 8),
    Drug("Furosemide", (20.0, 40.0, 80.0), "mg", ("IV", "PO"), 8),
    Drug("Metoprolol Tartrate", (12.5, 25.0, 50.0), "mg", ("PO",), 8),
    Drug("Senna", (8.6, 17.2), "mg", ("PO",), 7),
    Drug("Pantoprazole", (40.0,), "mg", ("PO", "IV"), 7),
    Drug("Aspirin", (81.0, 325.0), "mg", ("PO",), 7),
    Drug("Magnesium Sulfate", (1.0, 2.0), "g", ("IV",), 6),
    Drug("Ondansetron", (4.0, 8.0), "mg", ("IV", "PO"), 6),
    Drug("Atorvastatin", (10.0, 20.0, 40.0, 80.0), "mg", ("PO",), 6),
    Drug("Morphine Sulfate", (2.0, 4.0), "mg", ("IV",), 5),
    Drug("Oxycodone", (5.0, 10.0), "mg", ("PO",), 5),
    Drug("Vancomycin", (750.0, 1000.0, 1250.0), "mg", ("IV",), 5),
    Drug("Piperacillin-Tazobactam", (3.375, 4.5), "g", ("IV",), 4),
    Drug("Ceftriaxone", (1.0, 2.0), "g", ("IV",), 4),
    Drug("Dextrose 5%", (250.0, 1000.0), "mL", ("IV",), 4),
    Drug("Polyethylene Glycol", (17.0,), "g", ("PO",), 4),
    Drug("Bisacodyl", (10.0,), "mg", ("PR", "PO"), 4),
    Drug("Enoxaparin", (30.0, 40.0), "mg", ("SC",), 4),
    Drug("Lisinopril", (5.0, 10.0, 20.0), "mg", ("PO",), 4),
    Drug("Amlodipine", (5.0, 10.0), "mg", ("PO",), 4),
    Drug("Levothyroxine", (50.0, 75.0, 100.0), "mcg", ("PO",), 3),
    Drug("Warfarin", (1.0, 2.5, 5.0), "mg", ("PO",), 3),
    Drug("Lorazepam", (0.5, 1.0), "mg", ("PO", "IV"), 3),
    Drug("Albuterol Inhaler", (2.0,), "PUFF", ("IH",), 3),
    Drug("Ipratropium Bromide Neb", (1.0,), "NEB", ("IH",), 3),
    Drug("Famotidine", (20.0,), "mg", ("PO", "IV"), 3),
    Drug("Metformin", (500.0, 1000.0), "mg", ("PO",), 3),
    Drug("Clopidogrel", (75.0,), "mg", ("PO",), 3),
    Drug("Gabapentin", (100.0, 300.0), "mg", ("PO",), 3),
    Drug("Hydralazine", (10.0, 25.0), "mg", ("IV", "PO"), 2),
    Drug("Prednisone", (10.0, 20.0, 40.0), "mg", ("PO",), 2),
    Drug("Haloperidol", (0.5, 1.0, 2.0), "mg", ("IV", "PO"), 2),
    Drug("Ciprofloxacin", (250.0, 500.0), "mg", ("PO",), 2),
    Drug("Levofloxacin", (500.0, 750.0), "mg", ("PO", "IV"), 2),
    Drug("Fentanyl Citrate", (25.0, 50.0), "mcg", ("IV",), 2),
    Drug("Tamsulosin", (0.4,), "mg", ("PO",), 2),
    Drug("Lactulose", (15.0, 30.0), "mL", ("PO",), 2),
)


class LabItem(NamedTuple):
    """A lab test: its normal range, rounding, which way it goes wrong and how far."""

    item_id: int
    label: str
    fluid: str
    category: str
    unit: str | None
    low: float
    high: float
    decimals: int
    direction: str  # "high", "low" or "both": the side abnormal values fall on
    spread: float  # typical distance past the range, in range widths


LAB_ITEMS = (
    LabItem(50983, "Sodium", "Blood", "Chemistry", "mEq/L", 135, 145, 0, "both", 0.3),
    LabItem(50971, "Potassium", "Blood", "Chemistry", "mEq/L", 3.5, 5.1, 1, "both", 0.3),
    LabItem(50902, "Chloride", "Blood", "Chemistry", "mEq/L", 96, 108, 0, "both", 0.3),
    LabItem(50882, "Bicarbonate", "Blood", "Chemistry", "mEq/L", 22, 32, 0, "low", 0.3),
    LabItem(51006, "Urea Nitrogen", "Blood", "Chemistry", "mg/dL", 6, 20, 0, "high", 1.0),
    LabItem(50912, "Creatinine", "Blood", "Chemistry", "mg/dL", 0.5, 1.2, 1, "high", 1.0),
    LabItem(50931, "Glucose", "Blood", "Chemistry", "mg/dL", 70, 100, 0, "high", 1.5),
    LabItem(51222, "Hemoglobin", "Blood", "Hematology", "g/dL", 12.0, 17.5, 1, "low", 0.3),
    LabItem(51221, "Hematocrit", "Blood", "Hematology", "%", 36, 48, 1, "low", 0.3),
    LabItem(51301, "White Blood Cells", "Blood", "Hematology", "K/uL", 4.0, 11.0, 1, "both", 0.6),
    LabItem(51265, "Platelet Count", "Blood", "Hematology", "K/uL", 150, 400, 0, "both", 0.3),
    LabItem(50893, "Calcium, Total", "Blood", "Chemistry", "mg/dL", 8.4, 10.3, 1, "low", 0.3),
    LabItem(50960, "Magnesium", "Blood", "Chemistry", "mg/dL", 1.6, 2.6, 1, "low", 0.3),
    LabItem(50970, "Phosphate", "Blood", "Chemistry", "mg/dL", 2.7, 4.5, 1, "both", 0.4),
    LabItem(50813, "Lactate", "Blood", "Blood Gas", "mmol/L", 0.5, 2.0, 1, "high", 1.0),
    LabItem(51237, "INR(PT)", "Blood", "Hematology", None, 0.9, 1.1, 1, "high", 2.0),
    LabItem(51274, "PT", "Blood", "Hematology", "sec", 9.4, 12.5, 1, "high", 1.0),
    LabItem(51275, "PTT", "Blood", "Hematology", "sec", 25.0, 36.5, 1, "high", 0.7),
    LabItem(
        50861, "Alanine Aminotransferase (ALT)", "Blood", "Chemistry", "IU/L", 0, 40, 0, "high", 1.0
    ),
    LabItem(
        50878,
        "Aspartate Aminotransferase (AST)",
        "Blood",
        "Chemistry",
        "IU/L",
        0,
        40,
        0,
        "high",
        1.0,
    ),
    LabItem(50885, "Bilirubin, Total", "Blood", "Chemistry", "mg/dL", 0, 1.5, 1, "high", 1.0),
    LabItem(50862, "Albumin", "Blood", "Chemistry", "g/dL", 3.5, 5.2, 1, "low", 0.4),
    LabItem(51003, "Troponin T", "Blood", "Chemistry", "ng/mL", 0, 0.01, 2, "high", 8.0),
    LabItem(50820, "pH", "Blood", "Blood Gas", "units", 7.35, 7.45, 2, "both", 0.5),
    LabItem(50821, "pO2", "Blood", "Blood Gas", "mm Hg", 85, 105, 0, "both", 3.0),
)
BASIC_PANEL = (50983, 50971, 50902, 50882, 51006, 50912, 50931)
BLOOD_COUNT = (51222, 51221, 51301, 51265)

GENDERS = {"M": 0.55, "F": 0.45}
ETHNICITIES = {
    "White": 0.68,
    "Black or African American": 0.10,
    "Hispanic or Latino": 0.05,
    "Asian": 0.04,
    "Other": 0.03,
    "Unknown": 0.08,
    "Unable to Obtain": 0.02,
}
INSURANCES = {
    "Medicare": 0.50,
    "Private": 0.30,
    "Medicaid": 0.12,
    "Government": 0.03,
    "Self Pay": 0.05,
}
LANGUAGES = {
    "English": 0.78,
    "Spanish": 0.05,
    "Portuguese": 0.02,
    "Russian": 0.02,
    "Chinese": 0.02,
    "Haitian Creole": 0.01,
    "": 0.10,
}
MARITAL_STATUSES = {
    "Married": 0.45,
    "Single": 0.25,
    "Widowed": 0.14,
    "Divorced": 0.07,
    "Separated": 0.01,
    "": 0.08,
}
ADMISSION_TYPES = {"Emergency": 0.62, "Urgent": 0.12, "Elective": 0.18, "Observation": 0.08}
ADMISSION_LOCATIONS = {
    "Emergency": {"Emergency Room": 0.8, "Transfer from Hospital": 0.1, "Clinic Referral": 0.1},
    "Urgent": {"Transfer from Hospital": 0.5, "Physician Referral": 0.3, "Emergency Room": 0.2},
    "Elective": {"Physician Referral": 0.9, "Clinic Referral": 0.1},
    "Observation": {"Emergency Room": 0.7, "Clinic Referral": 0.3},
}
DISCHARGE_LOCATIONS = {
    "Home": 0.45,
    "Home Health Care": 0.20,
    "Skilled Nursing Facility": 0.15,
    "Rehab": 0.08,
    "Long Term Care Hospital": 0.03,
    "Hospice": 0.03,
    "Left Against Medical Advice": 0.02,
}
ICU_CHANCE = {"Emergency": 0.35, "Urgent": 0.35, "Elective": 0.25, "Observation": 0.0}
CARE_UNITS = {"MICU": 0.35, "SICU": 0.15, "CCU": 0.15, "CSRU": 0.2, "TSICU": 0.15}


@dataclass
class Patient:
    """A patient as drawn, before the admissions decide whether and when they died."""

    subject_id: int
    gender: str
    date_of_birth: date
    ethnicity: str
    insurance: str
    date_of_death: date | None = None

    def age_on(self, day: date) -> int:
        """Whole years of age on ``day``."""
        before_birthday = (day.month, day.day) < (self.date_of_birth.month, self.date_of_birth.day)
        return day.year - self.date_of_birth.year - before_birthday


@dataclass
class Admission:
    """One hospital stay, with its ICU stay if there was one."""

    hadm_id: int
    subject_id: int
    admit_time: datetime
    discharge_time: datetime
    admission_type: str
    admission_location: str
    discharge_location: str
    language: str | None
    marital_status: str | None
    icu: tuple[datetime, datetime] | None = None

    @property
    def days(self) -> float:
        """Length of the hospital stay in days."""
        return (self.discharge_time - self.admit_time).total_seconds() / 86400


def build_clinic(seed: int) -> list[TableRows]:
    """All rows of ``clinic`` for ``seed``, parents before children."""
    patients = draw_patients(table_rng(seed, "patients"))
    admissions = draw_admissions(table_rng(seed, "admissions"), patients)
    draw_deaths(table_rng(seed, "deaths"), patients, admissions)
    return [
        patient_rows(patients),
        admission_rows(admissions),
        icu_stay_rows(table_rng(seed, "icu_stays"), admissions),
        icd_rows(),
        diagnosis_rows(table_rng(seed, "diagnoses"), admissions),
        prescription_rows(table_rng(seed, "prescriptions"), admissions),
        lab_item_rows(),
        lab_event_rows(table_rng(seed, "lab_events"), admissions),
    ]


def draw_patients(rng: random.Random) -> list[Patient]:
    """Patients with ages skewed old (median about 66 at the start of the period)."""
    patients = []
    for index in range(PATIENT_COUNT):
        age_days = int((18 + 72 * rng.betavariate(3.2, 1.6)) * 365.25)
        patients.append(
            Patient(
                subject_id=10001 + index,
                gender=pick(rng, GENDERS),
                date_of_birth=FIRST_DAY - timedelta(days=age_days),
                ethnicity=pick(rng, ETHNICITIES),
                insurance=pick(rng, INSURANCES),
            )
        )
    return patients


def draw_admissions(rng: random.Random, patients: list[Patient]) -> list[Admission]:
    """One to a few admissions per patient, in time order; a death in hospital ends them."""
    admissions: list[Admission] = []
    for patient in patients:
        language = pick(rng, LANGUAGES) or None
        marital_status = pick(rng, MARITAL_STATUSES) or None
        day = day_between(rng, FIRST_DAY, LAST_DAY - timedelta(days=60))
        while day <= LAST_DAY:
            stay = draw_stay(rng, patient, day, 100001 + len(admissions))
            stay.language, stay.marital_status = language, marital_status  # kept per patient
            admissions.append(stay)
            if stay.discharge_location == "Died" or rng.random() > 0.35:
                break
            gap = max(2.0, lognormal(rng, 150, 1.0))
            day = stay.discharge_time.date() + timedelta(days=int(gap))
    return admissions


def draw_stay(rng: random.Random, patient: Patient, day: date, hadm_id: int) -> Admission:
    """One admission starting on ``day``: its times, ICU stay and how it ended."""
    kind = pick(rng, ADMISSION_TYPES)
    hour = rng.randint(7, 11) if kind == "Elective" else rng.randrange(24)
    admit = datetime(day.year, day.month, day.day, hour, rng.randint(0, 59))
    days = lognormal(rng, 1.0, 0.5) if kind == "Observation" else lognormal(rng, 3.8, 0.75)
    icu = None
    if rng.random() < ICU_CHANCE[kind]:
        before, in_icu = lognormal(rng, 0.4, 1.0), lognormal(rng, 1.9, 0.85)
        after = lognormal(rng, 2.0, 0.8)
        in_time = admit + timedelta(minutes=int(before * 1440) + 5)
        icu = (in_time, in_time + timedelta(minutes=int(min(in_icu, 40.0) * 1440) + 60))
        days = max(days, before + in_icu + after)
    discharge = admit + timedelta(minutes=int(days * 1440) + 30)
    if icu is not None:
        discharge = max(discharge, icu[1] + timedelta(hours=2))
    return Admission(
        hadm_id,
        patient.subject_id,
        admit,
        discharge,
        kind,
        pick(rng, ADMISSION_LOCATIONS[kind]),
        draw_discharge_location(rng, patient.age_on(day), icu is not None),
        None,
        None,
        icu,
    )


def draw_discharge_location(rng: random.Random, age: int, had_icu: bool) -> str:
    """Where the patient went; older patients and ICU patients die in hospital more often."""
    death_chance = 0.02 + 0.001 * max(0, age - 40) + (0.08 if had_icu else 0.0)
    return "Died" if rng.random() < death_chance else pick(rng, DISCHARGE_LOCATIONS)


def draw_deaths(rng: random.Random, patients: list[Patient], admissions: list[Admission]) -> None:
    """Set ``date_of_death``: the discharge day of a death in hospital, or some later deaths."""
    last = {a.subject_id: a for a in admissions}
    for patient in patients:
        stay = last[patient.subject_id]
        discharged = stay.discharge_time.date()
        if stay.discharge_location == "Died":
            patient.date_of_death = discharged
            continue
        chance = 0.5 if stay.discharge_location == "Hospice" else 0.08
        if rng.random() < chance:
            death = discharged + timedelta(days=int(lognormal(rng, 120, 1.0)))
            patient.date_of_death = death if death <= LAST_DEATH_DAY else None


def patient_rows(patients: list[Patient]) -> TableRows:
    """``patients`` rows."""
    rows = [
        (
            p.subject_id,
            p.gender,
            iso_date(p.date_of_birth),
            iso_date(p.date_of_death) if p.date_of_death else None,
            p.ethnicity,
            p.insurance,
        )
        for p in patients
    ]
    columns = ("subject_id", "gender", "date_of_birth", "date_of_death", "ethnicity", "insurance")
    return TableRows("patients", columns, rows)


def admission_rows(admissions: list[Admission]) -> TableRows:
    """``admissions`` rows."""
    rows = [
        (
            a.hadm_id,
            a.subject_id,
            iso_datetime(a.admit_time),
            iso_datetime(a.discharge_time),
            a.admission_type,
            a.admission_location,
            a.discharge_location,
            a.language,
            a.marital_status,
        )
        for a in admissions
    ]
    columns = (
        "hadm_id",
        "subject_id",
        "admit_time",
        "discharge_time",
        "admission_type",
        "admission_location",
        "discharge_location",
        "language",
        "marital_status",
    )
    return TableRows("admissions", columns, rows)


def icu_stay_rows(rng: random.Random, admissions: list[Admission]) -> TableRows:
    """``icu_stays`` rows; about one stay in ten moves to a second care unit."""
    rows = []
    for stay in (a for a in admissions if a.icu is not None):
        in_time, out_time = stay.icu
        first = pick(rng, CARE_UNITS)
        last = pick(rng, CARE_UNITS) if rng.random() < 0.1 else first
        days = round((out_time - in_time).total_seconds() / 86400, 2)
        rows.append(
            (
                200001 + len(rows),
                stay.subject_id,
                stay.hadm_id,
                first,
                last,
                iso_datetime(in_time),
                iso_datetime(out_time),
                days,
            )
        )
    columns = (
        "stay_id",
        "subject_id",
        "hadm_id",
        "first_careunit",
        "last_careunit",
        "in_time",
        "out_time",
        "length_of_stay",
    )
    return TableRows("icu_stays", columns, rows)


def icd_rows() -> TableRows:
    """``d_icd_diagnoses``: the code dictionary."""
    rows = [(code, short, long) for code, short, long, _ in ICD_CODES]
    return TableRows("d_icd_diagnoses", ("icd_code", "short_title", "long_title"), rows)


def diagnosis_rows(rng: random.Random, admissions: list[Admission]) -> TableRows:
    """``diagnoses``: one to twelve codes per admission, the first the principal one."""
    codes = [code for code, *_ in ICD_CODES]
    weights = [weight for *_, weight in ICD_CODES]
    rows = []
    for stay in admissions:
        count = min(12, max(1, round(lognormal(rng, 5.0, 0.45))))
        for seq_num, code in enumerate(pick_many(rng, codes, weights, count), start=1):
            rows.append((stay.subject_id, stay.hadm_id, seq_num, code))
    return TableRows("diagnoses", ("subject_id", "hadm_id", "seq_num", "icd_code"), rows)


def prescription_rows(rng: random.Random, admissions: list[Admission]) -> TableRows:
    """``prescriptions``: more drugs for longer stays; every order lies inside its stay."""
    weights = [drug.weight for drug in DRUGS]
    rows = []
    for stay in admissions:
        count = min(len(DRUGS), 1 + poisson(rng, min(2.5 + 0.5 * stay.days, 10.0)))
        for drug in pick_many(rng, DRUGS, weights, count):
            start, stop = order_days(rng, stay)
            rows.append(
                (
                    300001 + len(rows),
                    stay.subject_id,
                    stay.hadm_id,
                    drug.name,
                    rng.choice(drug.doses),
                    drug.unit,
                    rng.choice(drug.routes),
                    iso_date(start),
                    iso_date(stop),
                )
            )
    columns = (
        "prescription_id",
        "subject_id",
        "hadm_id",
        "drug",
        "dose_value",
        "dose_unit",
        "route",
        "start_date",
        "stop_date",
    )
    return TableRows("prescriptions", columns, rows)


def order_days(rng: random.Random, stay: Admission) -> tuple[date, date]:
    """Start and stop days of one order, early in the stay more often than late."""
    first, last = stay.admit_time.date(), stay.discharge_time.date()
    start = first + timedelta(days=int(rng.random() ** 2 * ((last - first).days + 1)))
    return start, day_between(rng, start, last)


def lab_item_rows() -> TableRows:
    """``d_lab_items``: the lab test dictionary with normal ranges."""
    rows = [(i.item_id, i.label, i.fluid, i.category, i.unit, i.low, i.high) for i in LAB_ITEMS]
    columns = ("item_id", "label", "fluid", "category", "unit", "normal_low", "normal_high")
    return TableRows("d_lab_items", columns, rows)


def lab_event_rows(rng: random.Random, admissions: list[Admission]) -> TableRows:
    """``lab_events``: one to three blood draws per stay, each a few panels of tests."""
    items = {item.item_id: item for item in LAB_ITEMS}
    rows = []
    for stay in admissions:
        abnormal_chance = 0.25 if stay.icu else 0.12
        draws = 1 + min(int(stay.days / 2), 2)
        for draw in range(draws):
            offset = stay.days * (draw + rng.uniform(0.05, 0.95)) / draws
            chart_time = iso_datetime(stay.admit_time + timedelta(minutes=int(offset * 1440)))
            for item_id in draw_panel(rng):
                value, flag = lab_value(rng, items[item_id], abnormal_chance)
                rows.append(
                    (
                        400001 + len(rows),
                        stay.subject_id,
                        stay.hadm_id,
                        item_id,
                        chart_time,
                        value,
                        items[item_id].unit,
                        flag,
                    )
                )
    columns = (
        "lab_event_id",
        "subject_id",
        "hadm_id",
        "item_id",
        "chart_time",
        "value",
        "unit",
        "flag",
    )
    return TableRows("lab_events", columns, rows)


def draw_panel(rng: random.Random) -> list[int]:
    """The item ids measured at one draw: usually the basic panel and a blood count."""
    chosen = list(BASIC_PANEL) if rng.random() < 0.8 else []
    chosen += list(BLOOD_COUNT) if rng.random() < 0.7 else []
    others = [i.item_id for i in LAB_ITEMS if i.item_id not in chosen]
    chosen += rng.sample(others, rng.randint(0, 2))
    return chosen or [rng.choice(BASIC_PANEL)]


def lab_value(rng: random.Random, item: LabItem, abnormal_chance: float) -> tuple:
    """A measured value and its flag (``"abnormal"`` outside the normal range, else None)."""
    if rng.random() < 0.01:
        return None, None  # a specimen that could not be measured
    width = item.high - item.low
    value = rng.triangular(item.low, item.high)
    if rng.random() < abnormal_chance:
        side = item.direction if item.direction != "both" else rng.choice(("high", "low"))
        excess = width * min(lognormal(rng, item.spread, 0.7), 4 * item.spread)
        value = item.high + excess if side == "high" else max(item.low / 2, item.low - excess)
    value = round(value, item.decimals)
    flag = "abnormal" if value < item.low or value > item.high else None
    return value, flag
