"""Result records: JSONL written after each test, Allure metrics, the terminal summary."""
