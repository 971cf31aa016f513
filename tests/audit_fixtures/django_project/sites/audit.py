import requests


class Outcome:
    def __init__(self, final_url, score):
        self.final_url = final_url
        self.score = score


def run_audit(url):
    response = requests.get(url)
    return Outcome(response.url, len(response.content))
