process.stdout.write('demo: not built yet\n');
