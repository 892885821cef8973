def plan_text(s):
    return "seed=%d draws=%d thin=%s" % (s["seed"], s["draws"], s["thin"])


def fit_text(m, s):
    return "%s(%g) with %s" % (m["name"], m["prior"], plan_text(s))


def move(d, p):
    return {"x": p["x"] + d, "y": p["y"] + d}


def model_card(m):
    return {"title": m["name"], "params": 2}
