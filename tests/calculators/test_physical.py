from medcalc_maintained.calculators import compute


def test_map_worked_example():
    # SBP 120, DBP 60: 2/3*60 + 1/3*120 = 40 + 40 = 80
    r = compute(5, {"Systolic Blood Pressure": [120, "mm Hg"], "Diastolic Blood Pressure": [60, "mm hg"]})
    assert r.value == "80"


def test_map_missing_and_bad_unit():
    r = compute(5, {"Systolic Blood Pressure": [120, "mm Hg"]})
    assert r.value is None and r.missing == ("Diastolic Blood Pressure",)
    r = compute(5, {"Systolic Blood Pressure": [120, "furlongs"], "Diastolic Blood Pressure": [60, "mm Hg"]})
    assert r.value is None and r.invalid == ("Systolic Blood Pressure",)


def test_a_non_finite_input_is_no_number():
    """Infinity, NaN and an int beyond float's range are not numbers for any calculator: the input
    is invalid, never computed into an infinite or NaN value."""
    for bad in ("inf", "Infinity", "nan", float("inf"), 10**400):
        r = compute(5, {"Systolic Blood Pressure": [bad, "mm Hg"], "Diastolic Blood Pressure": [60, "mm Hg"]})
        assert r.value is None and "Systolic Blood Pressure" in (*r.invalid, *r.missing), bad


def _v(cid, entities):
    return compute(cid, entities).value


# --- 6 BMI ------------------------------------------------------------------------------------

def test_bmi_metric():
    # 70 / 1.75^2 = 70 / 3.0625 = 22.857
    assert _v(6, {"weight": [70, "kg"], "height": [175, "cm"]}) == "22.857"


def test_bmi_units_and_missing():
    # 10200 g = 10.2 kg; 0.838 m -> 10.2 / 0.702244 = 14.525
    assert _v(6, {"weight": [10200, "g"], "height": [0.838, "m"]}) == "14.525"
    r = compute(6, {"weight": [70, "kg"]})
    assert r.value is None and r.missing == ("height",)


# --- 10 Ideal body weight (Devine) ------------------------------------------------------------

def test_ibw_male_cm():
    # 180 cm / 2.54 = 70.866 in; 50 + 2.3 * 10.866 = 74.992
    assert _v(10, {"sex": "Male", "height": [180, "cm"]}) == "74.992"


def test_ibw_female_units_and_missing():
    # 65 in: 45.5 + 2.3 * 5 = 57
    assert _v(10, {"sex": "female", "height": [65, "in"]}) == "57"
    # 1.6 m = 62.992 in: 45.5 + 2.3 * 2.992 = 52.382
    assert _v(10, {"sex": "Female", "height": [1.6, "m"]}) == "52.382"
    r = compute(10, {"height": [160, "cm"]})
    assert r.value is None and r.missing == ("sex",)


# --- 62 Adjusted body weight ------------------------------------------------------------------

def test_abw_female():
    # 168 cm = 66.142 in; IBW = 45.5 + 2.3*6.142 = 59.626; ABW = 59.626 + 0.4*(80-59.626) = 67.776
    assert _v(62, {"sex": "Female", "weight": [80.0, "kg"], "height": [168.0, "cm"]}) == "67.776"


def test_abw_male_pounds_and_missing():
    # 70 in: IBW = 50 + 2.3*10 = 73; 220.46226 lb = 100 kg; ABW = 73 + 0.4*(100-73) = 83.8
    assert _v(62, {"sex": "Male", "weight": [220.46226218, "lbs"], "height": [70, "in"]}) == "83.8"
    r = compute(62, {"sex": "Male", "height": [70, "in"]})
    assert r.value is None and r.missing == ("weight",)


# --- 60 Body surface area (Mosteller) ---------------------------------------------------------

def test_bsa_mosteller():
    # sqrt(176.1 * 77.1 / 3600) = sqrt(3.77147) = 1.942
    assert _v(60, {"weight": [77.1, "kg"], "height": [176.1, "cm"]}) == "1.942"


def test_bsa_metres_and_missing():
    # 1.8 m = 180 cm: sqrt(180 * 80 / 3600) = sqrt(4) = 2
    assert _v(60, {"weight": [80, "kg"], "height": [1.8, "m"]}) == "2"
    assert compute(60, {"height": [180, "cm"]}).missing == ("weight",)


# --- 61 Target weight -------------------------------------------------------------------------

def test_target_weight_cm():
    # 19.2 * 1.96^2 = 19.2 * 3.8416 = 73.759
    assert _v(61, {"Body Mass Index (BMI)": [19.2, "kg/m^2"], "height": [196, "cm"]}) == "73.759"


def test_target_weight_inches_and_missing():
    # 70 in = 1.778 m; 25 * 1.778^2 = 25 * 3.161284 = 79.032
    assert _v(61, {"Body Mass Index (BMI)": [25, "kg/m^2"], "height": [70, "in"]}) == "79.032"
    assert compute(61, {"height": [70, "in"]}).missing == ("Body Mass Index (BMI)",)


# --- 22 Maintenance fluids (4-2-1) ------------------------------------------------------------

def test_maintenance_fluids_bands():
    # 8 kg: 4*8 = 32; 17 kg: 40 + 2*(17-10) = 54; 70 kg: 60 + 1*(70-20) = 110
    assert _v(22, {"weight": [8, "kg"]}) == "32"
    assert _v(22, {"weight": [17.0, "kg"]}) == "54"
    assert _v(22, {"weight": [70, "kg"]}) == "110"


def test_maintenance_fluids_units_and_missing():
    # 3500 g = 3.5 kg: 4*3.5 = 14; 66.1387 lb = 30.0000 kg: 60 + 10 = 70
    assert _v(22, {"weight": [3500, "g"]}) == "14"
    assert _v(22, {"weight": [66.1387, "lbs"]}) == "70"
    assert compute(22, {}).missing == ("weight",)


# --- QTc family (RR = 60/HR s) ----------------------------------------------------------------

def _qt(qt, hr, qt_unit="msec"):
    return {"Heart Rate or Pulse": [hr, "beats per minute"], "QT interval": [qt, qt_unit]}


def test_qtc_hr60_is_identity():
    # HR 60 -> RR 1 s: every correction leaves QT = 400 unchanged;
    # Hodges 400 + 1.75*(60-60) = 400; Rautaharju 400*(120+60)/180 = 400
    for cid in (11, 56, 57, 58, 59):
        assert _v(cid, _qt(400, 60)) == "400", cid


def test_qtc_bazett():
    # RR = 60/131 = 0.45802 s; 330 / sqrt(0.45802) = 330 * 1.47761 = 487.612
    assert _v(11, _qt(330, 131)) == "487.612"
    # 0.4 s = 400 ms, HR 100 -> RR 0.6; 400 / sqrt(0.6) = 400 / 0.774597 = 516.398
    assert _v(11, _qt(0.4, 100, "s")) == "516.398"


def test_qtc_fridericia():
    # RR = 60/118 = 0.508475; 330 / 0.508475^(1/3) = 330 * 1.252879 = 413.451
    assert _v(56, _qt(330, 118)) == "413.451"
    assert compute(56, {"QT interval": [330, "msec"]}).missing == ("Heart Rate or Pulse",)


def test_qtc_framingham():
    # RR = 60/119 = 0.504202; 330 + 154*(1 - 0.504202) = 330 + 76.353 = 406.353
    assert _v(57, _qt(330, 119)) == "406.353"
    # HR 50 -> RR 1.2; 0.42 s = 420 ms; 420 + 154*(1-1.2) = 420 - 30.8 = 389.2
    assert _v(57, _qt(0.42, 50, "s")) == "389.2"


def test_qtc_hodges():
    # 330 + 1.75*(130 - 60) = 330 + 122.5 = 452.5
    assert _v(58, _qt(330, 130)) == "452.5"
    # HR 50: 400 + 1.75*(50-60) = 400 - 17.5 = 382.5
    assert _v(58, _qt(400, 50)) == "382.5"
    assert compute(58, {"Heart Rate or Pulse": [80, "bpm"]}).missing == ("QT interval",)


def test_qtc_rautaharju():
    # 330 * (120 + 136) / 180 = 330 * 256 / 180 = 469.333
    assert _v(59, _qt(330, 136)) == "469.333"
    # 0.36 s = 360 ms; 360 * (120 + 90) / 180 = 360 * 210 / 180 = 420
    assert _v(59, _qt(0.36, 90, "s")) == "420"
