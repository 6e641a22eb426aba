"""Anthropometric and haemodynamic calculators (MAP, BMI, body weights, BSA, QTc family)."""

from __future__ import annotations

from medcalc_maintained.calculators.base import Inputs, register


@register(5, "Mean Arterial Pressure (MAP)", "decimal")
def mean_arterial_pressure(x: Inputs) -> float | None:
    """MAP = 2/3 x DBP + 1/3 x SBP (mm Hg).

    Source: MDCalc "Mean Arterial Pressure (MAP)"; Sesso HD et al., Hypertension 2000;36:801-7.
    """
    sbp = x.quantity("Systolic Blood Pressure", "pressure", range_key="systolic_bp")
    dbp = x.quantity("Diastolic Blood Pressure", "pressure", range_key="diastolic_bp")
    sbp, dbp = x.require(sbp, dbp)[:]
    return 2.0 / 3.0 * dbp + 1.0 / 3.0 * sbp


# --- shared helpers ---------------------------------------------------------------------------

_SEX = {
    "male": "male", "m": "male", "man": "male", "boy": "male",
    "female": "female", "f": "female", "woman": "female", "girl": "female",
}


def _weight_kg(x: Inputs) -> float | None:
    return x.quantity("weight", "mass", range_key="body_weight")


def _height_cm(x: Inputs) -> float | None:
    return x.quantity("height", "length", range_key="height")


def _devine_ibw(sex: str, height_cm: float) -> float:
    """Devine ideal body weight (kg): 50 (male) or 45.5 (female) + 2.3 kg per inch above 60 in."""
    base = 50.0 if sex == "male" else 45.5
    return base + 2.3 * (height_cm / 2.54 - 60.0)


def _rr_seconds(x: Inputs) -> tuple[float, float, float]:
    """QT (ms), heart rate (/min) and RR interval (s) = 60 / HR."""
    qt = x.quantity("QT interval", "time_ms", range_key="qt_interval")
    hr = x.quantity("Heart Rate or Pulse", "rate", range_key="heart_rate")
    qt, hr = x.require(qt, hr)[:]
    return qt, hr, 60.0 / hr


# --- body size --------------------------------------------------------------------------------

@register(6, "Body Mass Index (BMI)", "decimal")
def body_mass_index(x: Inputs) -> float:
    """BMI = weight (kg) / height (m)^2 (kg/m^2).

    Source: MDCalc "Body Mass Index (BMI) and Body Surface Area (BSA)"; Quetelet index, as used by
    WHO (Technical Report Series 894, 2000).
    """
    w = _weight_kg(x)
    h = _height_cm(x)
    w, h = x.require(w, h)[:]
    return w / (h / 100.0) ** 2


@register(10, "Ideal Body Weight", "decimal")
def ideal_body_weight(x: Inputs) -> float:
    """Devine formula: IBW (kg) = 50 (male) / 45.5 (female) + 2.3 x (height in inches - 60).

    Source: Devine BJ. Gentamicin therapy. Drug Intell Clin Pharm 1974;8:650-5; MDCalc "Ideal Body
    Weight and Adjusted Body Weight". Applied linearly for every height (as MDCalc does).
    """
    sex = x.choice("sex", _SEX)
    h = _height_cm(x)
    sex, h = x.require(sex, h)[:]
    return _devine_ibw(sex, h)


@register(62, "Adjusted Body Weight", "decimal")
def adjusted_body_weight(x: Inputs) -> float:
    """ABW (kg) = IBW + 0.4 x (actual weight - IBW), IBW by the Devine formula.

    Source: MDCalc "Ideal Body Weight and Adjusted Body Weight"; Devine BJ, Drug Intell Clin Pharm
    1974;8:650-5 (IBW); 0.4 correction factor per Bauer LA, Applied Clinical Pharmacokinetics.
    """
    sex = x.choice("sex", _SEX)
    h = _height_cm(x)
    w = _weight_kg(x)
    sex, h, w = x.require(sex, h, w)[:]
    ibw = _devine_ibw(sex, h)
    return ibw + 0.4 * (w - ibw)


@register(60, "Body Surface Area Calculator", "decimal")
def body_surface_area(x: Inputs) -> float:
    """Mosteller formula: BSA (m^2) = sqrt(height (cm) x weight (kg) / 3600).

    Source: Mosteller RD. Simplified calculation of body-surface area. N Engl J Med 1987;317:1098;
    MDCalc "Body Surface Area (BSA)" (Mosteller).
    """
    w = _weight_kg(x)
    h = _height_cm(x)
    w, h = x.require(w, h)[:]
    return (h * w / 3600.0) ** 0.5


@register(61, "Target weight", "decimal")
def target_weight(x: Inputs) -> float:
    """Target weight (kg) = target BMI (kg/m^2) x height (m)^2 (the BMI definition solved for weight).

    Source: MDCalc "Target Weight" / BMI definition (Quetelet; WHO TRS 894, 2000).
    """
    bmi = x.quantity("Body Mass Index (BMI)", "bmi", range_key="bmi")
    h = _height_cm(x)
    bmi, h = x.require(bmi, h)[:]
    return bmi * (h / 100.0) ** 2


@register(22, "Maintenance Fluids Calculations", "decimal")
def maintenance_fluids(x: Inputs) -> float:
    """Holliday-Segar "4-2-1" rule (mL/hr): 4 mL/kg/hr for the first 10 kg, 2 mL/kg/hr for the
    next 10 kg, 1 mL/kg/hr for each kg above 20 kg.

    Source: Holliday MA, Segar WE. The maintenance need for water in parenteral fluid therapy.
    Pediatrics 1957;19:823-32; MDCalc "Maintenance Fluids Calculations".
    """
    w = _weight_kg(x)
    (w,) = x.require(w)[:]
    if w <= 10.0:
        return 4.0 * w
    if w <= 20.0:
        return 40.0 + 2.0 * (w - 10.0)
    return 60.0 + 1.0 * (w - 20.0)


# --- corrected QT interval (all in ms; RR = 60 / HR in seconds) -------------------------------

@register(11, "QTc Bazett Calculator", "decimal")
def qtc_bazett(x: Inputs) -> float:
    """Bazett: QTc = QT / sqrt(RR), RR = 60 / HR (s).

    Source: Bazett HC. An analysis of the time-relations of electrocardiograms. Heart
    1920;7:353-70; MDCalc "Corrected QT Interval (QTc)".
    """
    qt, _hr, rr = _rr_seconds(x)
    return qt / rr ** 0.5


@register(56, "QTc Fridericia Calculator", "decimal")
def qtc_fridericia(x: Inputs) -> float:
    """Fridericia: QTc = QT / RR^(1/3), RR = 60 / HR (s).

    Source: Fridericia LS. Acta Med Scand 1920;53:469-86; MDCalc "Corrected QT Interval (QTc)".
    """
    qt, _hr, rr = _rr_seconds(x)
    return qt / rr ** (1.0 / 3.0)


@register(57, "QTc Framingham Calculator", "decimal")
def qtc_framingham(x: Inputs) -> float:
    """Framingham: QTc = QT + 154 x (1 - RR), QT in ms, RR = 60 / HR (s).

    Source: Sagie A et al. An improved method for adjusting the QT interval for heart rate (the
    Framingham Heart Study). Am J Cardiol 1992;70:797-801; MDCalc "Corrected QT Interval (QTc)".
    """
    qt, _hr, rr = _rr_seconds(x)
    return qt + 154.0 * (1.0 - rr)


@register(58, "QTc Hodges Calculator", "decimal")
def qtc_hodges(x: Inputs) -> float:
    """Hodges: QTc = QT + 1.75 x (HR - 60), QT in ms, HR in /min.

    Source: Hodges M et al. Bazett's QT correction reviewed: evidence that a linear QT correction
    for heart rate is better. J Am Coll Cardiol 1983;1:694; MDCalc "Corrected QT Interval (QTc)".
    """
    qt, hr, _rr = _rr_seconds(x)
    return qt + 1.75 * (hr - 60.0)


@register(59, "QTc Rautaharju Calculator", "decimal")
def qtc_rautaharju(x: Inputs) -> float:
    """Rautaharju: QTc = QT x (120 + HR) / 180, QT in ms, HR in /min.

    Source: Rautaharju PM, Mason JW, Akiyama T. New age- and sex-specific criteria for QT
    prolongation based on rate correction formulas that minimize bias at the upper normal limits.
    Int J Cardiol 2014;174:535-40; MDCalc "Corrected QT Interval (QTc)".
    """
    qt, hr, _rr = _rr_seconds(x)
    return qt * (120.0 + hr) / 180.0
