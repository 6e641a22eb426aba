from medcalc_maintained.cli import app

app()
