"""benchmarks.compare: the figures it reads from each benchmark's report, and its table."""

from benchmarks.compare import figures, table

SPARKJET = "| sparkjet | 12.00 | 12.00 | — | — | — | 21.61 | 8.0 | 38.00 | 626 | 303 | 0.07 | ok |"
DATAFRAME = "| dataframe | 15.00 | 15.00 | — | — | — | 23.77 | 7.2 | 39.93 | 933 | 142 | 0.06 | ok |"
VARIANT = "| {} | {} | 7.30 s | 1, 4.47 s | {} | 23,326 | 4,474 | 21 of 21 files, 25.39 s | 788 | 1.67 s | 2.09 s | 2.26 s | 1,634 MiB | 67.71 s | 0.10 |"


def test_a_word_count_report_gives_each_inputs_time_ratio_cpu_and_memory():
    report = "\n".join(["| target | 12 s vs 15 s |", SPARKJET, DATAFRAME, SPARKJET.replace("12.00", "6.00"), DATAFRAME])
    found = figures("batch", report)
    assert found["word count, 1 file: sparkjet job s"] == 12.0
    assert found["word count, 1 file: ÷ DataFrame"] == 0.8
    assert found["word count, 8 files: ÷ DataFrame"] == 0.4
    assert found["word count, 1 file: sparkjet CPU s"] == 38.0 and found["word count, 1 file: sparkjet peak RSS MiB"] == 626


def test_a_stream_report_is_read_from_the_table_of_each_variant_not_the_ratios():
    report = "\n".join([
        "| SS, Python UDF | 0.93 | 0.56 | — | — | — | 0.87 | 1.00 |",
        VARIANT.format("sparkjet", "identical (51,465 window-word counts)", "4,474"),
        VARIANT.format("SS, Python UDF", "identical (51,465 window-word counts)", "2,237"),
    ])
    found = figures("stream", report)
    assert found["stream: burst lines/s"] == 4474 and found["stream: ÷ SS Python UDF, burst"] == 2.0
    assert found["stream: counts identical (1) or not (0)"] == 1.0 and found["stream: latency median s"] == 1.67


def test_the_table_gives_each_figures_medians_and_after_over_before():
    text = table({"before": {"state: s": [2.0, 4.0, 3.0]}, "after": {"state: s": [3.3, 3.0, 3.6]}})
    assert "| state: s | 2.00, 4.00, 3.00 | 3.00 | 3.30, 3.00, 3.60 | 3.30 | 1.10 |" in text
