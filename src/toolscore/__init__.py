from toolscore.report.export import load_run as load_run  # one row per (sample, epoch)
